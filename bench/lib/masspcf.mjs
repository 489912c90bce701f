// masspcf (the Python library whose semantics pxl follows) as a baseline measured in the same run:
// only where `python3 -c "import masspcf"` succeeds. Elsewhere a report says why it has no masspcf
// figure, and prints none.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeNpy } from '../../dist/pcf/npy.js';
import { writePcfNpz } from '../../dist/pcf/npzWriter.js';

const HARNESS = fileURLToPath(new URL('../baselines/masspcfPdist.py', import.meta.url));

function lastLine(text) {
  return text.trim().split('\n').at(-1) ?? '';
}

/**
 * Whether masspcf can be measured here: `{ available: true, version }`, or `{ available: false,
 * reason }` with the reason `python3 -c "import masspcf"` failed.
 *
 * @param {{ python?: string, env?: NodeJS.ProcessEnv }} [options]
 */
export function probeMasspcf({ python = 'python3', env = process.env } = {}) {
  const r = spawnSync(python, ['-c', 'import masspcf; print(getattr(masspcf, "__version__", None))'], { encoding: 'utf8', env, timeout: 120_000 });
  if (r.error !== undefined) return { available: false, reason: `${python} could not be run: ${r.error.message}` };
  if (r.status !== 0) return { available: false, reason: `${python} -c "import masspcf" failed: ${lastLine(r.stderr)}` };
  const version = r.stdout.trim();
  return { available: true, version: version === 'None' ? null : version };
}

/**
 * masspcf's pdist of `set` (a float64 PcfSet), `repeats` calls in a Python process of its own:
 * the wall seconds of each call, and its dense n x n result.
 *
 * @returns {Promise<{ seconds: number[], dense: Float64Array }>}
 * @throws when the harness fails, with its last line of stderr.
 */
export async function masspcfPdist(set, p, repeats, { python = 'python3', env = process.env } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'pxl-bench-masspcf-'));
  try {
    const chunks = [];
    await writePcfNpz(set, async (chunk) => void chunks.push(Buffer.from(chunk)));
    const input = join(dir, 'pcfs.npz');
    const output = join(dir, 'dist.npy');
    writeFileSync(input, Buffer.concat(chunks));
    const r = spawnSync(python, [HARNESS, input, String(p), String(repeats), output], { encoding: 'utf8', env, maxBuffer: 1 << 20 });
    if (r.error !== undefined) throw new Error(`masspcf's pdist could not be run: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`masspcf's pdist failed: ${lastLine(r.stderr)}`);
    const { seconds } = JSON.parse(lastLine(r.stdout));
    const npy = decodeNpy(new Uint8Array(readFileSync(output)));
    if (npy.dtype !== 'float64' || npy.shape.length !== 2 || npy.shape[0] !== set.count || npy.shape[1] !== set.count) {
      throw new Error(`masspcf's pdist gave an array of shape [${npy.shape}] (${npy.dtype}), not [${set.count}, ${set.count}] float64`);
    }
    return { seconds, dense: npy.data };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * How far pxl's DistanceMatrix `d` is from masspcf's `dense` result: the largest difference of an
 * entry (both triangles) relative to the largest entry, and whether every entry is bit for bit the
 * same (the diagonal included; -0 equals 0).
 */
export function compareWithMasspcf(d, dense) {
  const n = d.n;
  const condensed = d.condensed;
  let largest = 0;
  let diff = 0;
  let identical = true;
  const check = (ours, theirs) => {
    largest = Math.max(largest, Math.abs(theirs));
    diff = Math.max(diff, Math.abs(ours - theirs));
    if (ours !== theirs && !(Number.isNaN(ours) && Number.isNaN(theirs))) identical = false;
  };
  let k = 0;
  for (let i = 0; i < n; i++) {
    check(0, dense[i * n + i]);
    for (let j = i + 1; j < n; j++, k++) {
      check(condensed[k], dense[i * n + j]);
      check(condensed[k], dense[j * n + i]);
    }
  }
  return { maxRelDiff: largest === 0 ? diff : diff / largest, identical };
}
