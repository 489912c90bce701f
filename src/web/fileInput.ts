/**
 * PCF files from the user: a file picker and a drop zone both hand over a File, which is parsed
 * by the library as JSON (what `pxl random-pcfs` writes) or as the `.npz` layout (offsets, times,
 * values). The format comes from the extension, else from the first bytes (a zip starts "PK").
 */
import { parsePcfJson, parsePcfNpz, type PcfSet } from 'pxl';

/**
 * Calls `onFile` with each file chosen in `picker` or dropped anywhere on the page; `zone` is lit
 * while a file is dragged over it. A drop the page did not take would have the browser open the
 * file in its place, and the result shown would be lost.
 */
export function watchFileInputs(picker: HTMLInputElement, zone: HTMLElement, onFile: (file: File) => void): void {
  picker.addEventListener('change', () => {
    const file = picker.files?.[0];
    // Cleared so that choosing the same file again (after editing it) loads it again.
    picker.value = '';
    if (file !== undefined) onFile(file);
  });
  zone.addEventListener('dragover', () => zone.classList.add('dragging'));
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
  window.addEventListener('dragover', (event) => event.preventDefault());
  window.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('dragging');
    const file = event.dataTransfer?.files[0];
    if (file !== undefined) onFile(file);
  });
}

/**
 * The PCFs in `file`. Rejects with the library's error (InputFormatError, PcfError), whose message
 * says what is wrong and where, starting with the file name (added when the library's does not).
 */
export async function readPcfFile(file: File): Promise<PcfSet> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const lower = file.name.toLowerCase();
  const isZip = bytes.length >= 2 && bytes[0] === 0x50 && bytes[1] === 0x4b;
  try {
    if (lower.endsWith('.npz') || (!lower.endsWith('.json') && isZip)) return parsePcfNpz(bytes, { file: file.name });
    return parsePcfJson(new TextDecoder().decode(bytes), { file: file.name });
  } catch (error) {
    if (error instanceof Error && !error.message.startsWith(file.name)) error.message = `${file.name}: ${error.message}`;
    throw error;
  }
}
