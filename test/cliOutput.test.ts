import { describe, expect, it } from 'vitest';
import type { FileSink } from '../src/cli/atomicFile.js';
import { NPY_PART_BYTES, writeArrayTo } from '../src/cli/output.js';
import { encodeNpy } from '../src/pcf/npy.js';

/** A sink that keeps every chunk it is given. */
function collect(): { sink: FileSink; chunks: Array<string | Uint8Array> } {
  const chunks: Array<string | Uint8Array> = [];
  return { chunks, sink: { write: async (chunk) => void chunks.push(chunk) } };
}

describe('results written front to back (standard output, .json files)', () => {
  it('writes an .npy result in parts, never as one buffer of the whole file (which cannot pass 2^32 bytes), byte for byte what encodeNpy gives', async () => {
    const data = new Float64Array(3 * 2 ** 20 + 5).map((_, k) => k / 7);
    const { sink, chunks } = collect();
    await writeArrayTo(sink, 'standard output', 'npy', { data, shape: [data.length] });
    const bytes = chunks.map((c) => c as Uint8Array);
    expect(Math.max(...bytes.map((c) => c.byteLength))).toBeLessThanOrEqual(NPY_PART_BYTES);
    expect(Buffer.concat(bytes).equals(Buffer.from(encodeNpy(data, [data.length])))).toBe(true);
  });

  it('writes a .json row longer as text than the longest string V8 holds (a condensed vector of 23 million entries)', async () => {
    const entry = -1.2345678901234567e-300;
    const n = 23_000_000;
    const data = new Float64Array(n).fill(entry);
    let length = 0;
    let first = '';
    let last = '';
    const sink: FileSink = {
      write: async (chunk) => {
        const text = chunk as string;
        if (first === '') first = text.slice(0, 60);
        last = (last + text).slice(-60);
        length += text.length;
      },
    };
    await writeArrayTo(sink, 'd.json', 'json', { data, shape: [n] });
    const text = String(entry);
    expect(length).toBe(n * (text.length + 1) + 2);
    expect(length).toBeGreaterThan(2 ** 29);
    expect(first).toBe(`[${`${text},`.repeat(3)}`.slice(0, 60));
    expect(last).toBe(`${`,${text}`.repeat(3)}]\n`.slice(-60));
  }, 120_000);
});
