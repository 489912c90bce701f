import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { OptionError, PcfError } from '../src/core/errors.js';
import { run } from '../src/cli/main.js';
import { pdist } from '../src/pcf/operations.js';
import { referencePdist } from '../src/pcf/distance.js';
import { readPcfFile } from '../src/pcf/pcfFileRead.js';
import { decodeNpy, type NpyArray } from '../src/pcf/npy.js';
import { Pcf } from '../src/pcf/pcf.js';
import { randomPcfs } from '../src/pcf/random.js';
import { expectAllClose } from './helpers/closeTo.js';

/** A stream that records what is written, as a terminal or as a pipe. */
class Capture {
  text = '';
  readonly columns = 100;
  constructor(readonly isTTY: boolean, private readonly onWrite?: () => void) {}
  write(chunk: string): boolean {
    this.text += chunk;
    this.onWrite?.();
    return true;
  }
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

interface PxlOptions {
  tty?: boolean;
  signal?: AbortSignal;
  onStderr?: () => void;
  sigint?: boolean;
}

async function pxl(args: string[], options: PxlOptions = {}): Promise<Ran> {
  const stdout = new Capture(false);
  const stderr = new Capture(options.tty ?? false, options.onStderr);
  const code = await run(args, { stdout, stderr, interceptSigint: options.sigint ?? false, ...(options.signal && { signal: options.signal }) });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

// Known answers worked by hand. A = 10 on [0,2), 5 on [2,3); B = 5 on [0,6); C = 4 on [0,3);
// D = 2 on [0,3). L1: |A-B| = 5*2 + 0*1 + 5*3 = 25, |A-C| = 6*2 + 1 = 13, |A-D| = 8*2 + 3 = 19,
// |B-C| = 1*3 + 5*3 = 18, |B-D| = 3*3 + 5*3 = 24, |C-D| = 2*3 = 6. L2 inner: C.C = 48, C.D = 24,
// D.D = 12.
const A = [[0, 10], [2, 5], [3, 0]];
const B = [[0, 5], [6, 0]];
const C = [[0, 4], [3, 0]];
const D = [[0, 2], [3, 0]];
const SQUARE = [
  [0, 25, 13, 19],
  [25, 0, 18, 24],
  [13, 18, 0, 6],
  [19, 24, 6, 0],
];
// scipy's order: (0,1), (0,2), (0,3), (1,2), (1,3), (2,3).
const CONDENSED = [25, 13, 19, 18, 24, 6];
const SUMMARY = /^pdist: 4 PCFs, 6 pairs in \d+\.\d\d s \(\d+(\.\d\d [kMGT])? pairs\/s\) -> \S+, computed on \d+ CPU cores?\n$/;

let dir: string;
const at = (name: string): string => join(dir, name);
const inputs = ['known.json', 'cd.json', 'nested.json', 'random.json', 'bad-pcf.json', 'broken.json', 'huge.json'];

/** The files in the work directory besides the inputs: outputs, and any temporary file left over. */
async function written(): Promise<string[]> {
  return (await readdir(dir)).filter((name) => !inputs.includes(name)).sort();
}

/** Reads an output .npy; copied out of Node's pooled Buffer into an array of its own. */
async function readNpy(name: string): Promise<NpyArray> {
  return decodeNpy(new Uint8Array(await readFile(at(name))));
}

async function clean(): Promise<void> {
  for (const name of await written()) await rm(at(name));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cli-'));
  await writeFile(at('known.json'), JSON.stringify({ pcfs: [A, B, C, D] }));
  await writeFile(at('cd.json'), JSON.stringify([C, D]));
  await writeFile(at('nested.json'), JSON.stringify([[A, B], [C, D]]));
  await writeFile(at('bad-pcf.json'), JSON.stringify([C, [[1, 1], [2, 0]]]));
  await writeFile(at('broken.json'), '{"pcfs": [[[0, 1], [2, 0]]');
  // |2 - 0| over [0, largest double) overflows to Infinity.
  await writeFile(at('huge.json'), JSON.stringify([[[0, 2]], [[0, 0]]]));
});

afterEach(clean);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pxl random-pcfs', () => {
  it('writes the same file for the same seed, holding randomPcfs of those options', async () => {
    const first = await pxl(['random-pcfs', '--n', '12', '--points', '6', '--seed', '7', '-o', at('random.json')]);
    expect(first).toEqual({ code: 0, stdout: '', stderr: `random-pcfs: 12 PCFs of 6 breakpoints (seed 7) -> ${at('random.json')}\n` });
    const again = await pxl(['random-pcfs', '--n', '12', '--points', '6', '--seed', '7', '-o', at('again.json'), '--quiet']);
    expect(again).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await readFile(at('again.json'), 'utf8')).toBe(await readFile(at('random.json'), 'utf8'));
    await pxl(['random-pcfs', '--n', '12', '--points', '6', '--seed', '8', '-o', at('other.json'), '-q']);
    expect(await readFile(at('other.json'), 'utf8')).not.toBe(await readFile(at('random.json'), 'utf8'));

    const read = await readPcfFile(at('random.json'));
    const expected = randomPcfs({ n: 12, points: 6, seed: 7 });
    expect(JSON.parse(await readFile(at('random.json'), 'utf8'))).toHaveProperty('pcfs');
    expect(read.shape).toEqual([12]);
    expect(Array.from(read.times)).toEqual(Array.from(expected.times));
    expect(Array.from(read.values)).toEqual(Array.from(expected.values));
  });

  it('refuses an output that is neither .json nor .npz and a bad count with exit code 2', async () => {
    const ext = await pxl(['random-pcfs', '--n', '2', '--points', '2', '-o', at('r.npy')]);
    expect(ext.code).toBe(2);
    expect(ext.stderr).toBe(`pxl: cannot write ${at('r.npy')}: the output format is chosen by the file extension, which must be .json or .npz (got extension '.npy')\n`);
    const n = await pxl(['random-pcfs', '--n', '-3', '--points', '2', '-o', at('r.json')]);
    expect(n.code).toBe(2);
    expect(n.stderr).toBe("pxl: option '--n <n>' argument '-3' is invalid. expected an integer >= 0.\n(add --help for usage)\n");
    expect(await written()).toEqual([]);
  });

  it('says what to change when the disk fills up while it writes (.json and .npz), and leaves no file', async () => {
    const { open: openFile } = await import('node:fs/promises');
    const probe = await openFile(at('probe'), 'w');
    const handles = Object.getPrototypeOf(probe) as { writeFile: (...args: unknown[]) => Promise<void> };
    await probe.close();
    await rm(at('probe'));
    const full = vi.spyOn(handles, 'writeFile').mockRejectedValue(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
    try {
      for (const name of ['r.json', 'r.npz']) {
        const r = await pxl(['random-pcfs', '--n', '20', '--points', '3', '-o', at(name)]);
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: `pxl: ${at(name)}: cannot write the file: ENOSPC: no space left on device, write; free space in ${dir}, or write the file to another disk\n` });
      }
    } finally {
      full.mockRestore();
    }
    expect(await written()).toEqual([]);
  });
});

describe('pxl pdist', () => {
  it('writes the square matrix as .npy, float64 by default', async () => {
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy')]);
    expect(r.code).toBe(0);
    const npy = await readNpy('d.npy');
    expect(npy.dtype).toBe('float64');
    expect(npy.shape).toEqual([4, 4]);
    expect(Array.from(npy.data)).toEqual(SQUARE.flat());
  });

  it("writes scipy's condensed order as .npy, entry (i, j) at n*i - i*(i+1)/2 + (j - i - 1)", async () => {
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '--layout', 'condensed', '--dtype', 'float32']);
    expect(r.code).toBe(0);
    const npy = await readNpy('d.npy');
    expect(npy.dtype).toBe('float32');
    expect(npy.shape).toEqual([6]);
    expect(Array.from(npy.data)).toEqual(CONDENSED);
    const n = 4;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) expect(npy.data[n * i - (i * (i + 1)) / 2 + (j - i - 1)]).toBe(SQUARE[i]![j]);
    }
  });

  it('writes .json as an array of rows (square) or one array (condensed)', async () => {
    expect((await pxl(['pdist', at('known.json'), '-o', at('d.json')])).code).toBe(0);
    expect(JSON.parse(await readFile(at('d.json'), 'utf8'))).toEqual(SQUARE);
    expect((await pxl(['pdist', at('known.json'), '-o', at('c.json'), '--layout', 'condensed'])).code).toBe(0);
    expect(JSON.parse(await readFile(at('c.json'), 'utf8'))).toEqual(CONDENSED);
  });

  it('takes --p: the L2 distance of C and D is sqrt(2^2 * 3)', async () => {
    expect((await pxl(['pdist', at('cd.json'), '-o', at('d.json'), '--p', '2'])).code).toBe(0);
    const d = JSON.parse(await readFile(at('d.json'), 'utf8')) as number[][];
    expect(d[0]![0]).toBe(0);
    expect(d[1]![0]).toBeCloseTo(Math.sqrt(12), 12);
  });

  it('matches the brute-force reference on random PCFs (relative tolerance 1e-12)', async () => {
    await pxl(['random-pcfs', '--n', '12', '--points', '6', '--seed', '7', '-o', at('random.json'), '-q']);
    expect((await pxl(['pdist', at('random.json'), '-o', at('d.npy'), '--p', '1.5', '-q'])).code).toBe(0);
    const npy = await readNpy('d.npy');
    const set = randomPcfs({ n: 12, points: 6, seed: 7 });
    const pcfs = Array.from({ length: 12 }, (_, k) => {
      const points: Array<[number, number]> = [];
      for (let b = set.offsets[k]!; b < set.offsets[k + 1]!; b++) points.push([set.times[b]!, set.values[b]!]);
      return Pcf.from(points);
    });
    const reference = referencePdist(pcfs, 1.5).flat();
    expectAllClose(npy.data, reference, { rtol: 1e-12, atol: 1e-12, what: 'pdist --p 1.5' });
  });

  it('prints one summary line and no bar when stderr is piped', async () => {
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy')]);
    expect(r.stderr).toMatch(SUMMARY);
    expect(r.stderr).toContain(`-> ${at('d.npy')}`);
    expect(r.stderr).not.toContain('\x1b');
  });

  it('draws a progress bar on a terminal, then the summary', async () => {
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy')], { tty: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('pdist [');
    expect(r.stderr).toContain('6/6 pairs');
    expect(r.stderr.slice(r.stderr.lastIndexOf('pdist: '))).toMatch(SUMMARY);
  });

  it('prints nothing with --quiet, on a terminal or not', async () => {
    expect(await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '--quiet'], { tty: true })).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '-q'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('pxl cdist and l2-kernel', () => {
  it('cdist keeps the shape [...X.shape, ...Y.shape] in .npy and nests .json', async () => {
    expect((await pxl(['cdist', at('nested.json'), at('cd.json'), '-o', at('c.npy'), '-q'])).code).toBe(0);
    const npy = await readNpy('c.npy');
    expect(npy.shape).toEqual([2, 2, 2]);
    expect(Array.from(npy.data)).toEqual([13, 19, 18, 24, 0, 6, 6, 0]);
    expect((await pxl(['cdist', at('nested.json'), at('cd.json'), '-o', at('c.json'), '-q'])).code).toBe(0);
    expect(JSON.parse(await readFile(at('c.json'), 'utf8'))).toEqual([[[13, 19], [18, 24]], [[0, 6], [6, 0]]]);
  });

  it('cdist --op l2-inner gives inner products', async () => {
    const r = await pxl(['cdist', at('cd.json'), at('cd.json'), '-o', at('c.json'), '--op', 'l2-inner']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^cdist: 2 x 2 PCFs, 4 pairs in /);
    expect(JSON.parse(await readFile(at('c.json'), 'utf8'))).toEqual([[48, 24], [24, 12]]);
  });

  it('counts one pair in the singular', async () => {
    const r = await pxl(['pdist', at('cd.json'), '-o', at('one.json')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^pdist: 2 PCFs, 1 pair in /);
  });

  it('pdist and l2-kernel take nested arrays as the list of their PCFs in order, as --help says', async () => {
    expect((await pxl(['pdist', at('nested.json'), '-o', at('n.json'), '-q'])).code).toBe(0);
    expect(JSON.parse(await readFile(at('n.json'), 'utf8'))).toEqual(SQUARE);
    expect((await pxl(['l2-kernel', at('nested.json'), '-o', at('nk.json'), '-q'])).code).toBe(0);
    expect(JSON.parse(await readFile(at('nk.json'), 'utf8')).slice(2).map((row: number[]) => row.slice(2))).toEqual([[48, 24], [24, 12]]);
    expect((await pxl(['pdist', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('nested arrays are taken as the list of their PCFs in order');
    expect((await pxl(['--help'])).stdout.replace(/\s+/g, ' ')).toContain('pdist and l2-kernel take them as the list of their PCFs in order');
  });

  it('l2-kernel writes the full kernel matrix, diagonal included', async () => {
    const r = await pxl(['l2-kernel', at('cd.json'), '-o', at('k.npy')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^l2-kernel: 2 PCFs, 3 pairs in /);
    const npy = await readNpy('k.npy');
    expect(npy.shape).toEqual([2, 2]);
    expect(Array.from(npy.data)).toEqual([48, 24, 24, 12]);
    expect((await pxl(['l2-kernel', at('cd.json'), '-o', at('k.json'), '-q'])).code).toBe(0);
    expect(JSON.parse(await readFile(at('k.json'), 'utf8'))).toEqual([[48, 24], [24, 12]]);
  });
});

describe('pxl errors', () => {
  const cases: Array<{ name: string; args: () => string[]; code: number; stderr: () => string | RegExp }> = [
    {
      name: 'a missing input file',
      args: () => ['pdist', at('missing.json'), '-o', at('d.npy')],
      code: 1,
      stderr: () => `pxl: ${at('missing.json')}: cannot read the file: ENOENT: no such file or directory, open '${at('missing.json')}'\n`,
    },
    {
      name: 'malformed JSON',
      args: () => ['pdist', at('broken.json'), '-o', at('d.npy')],
      code: 1,
      stderr: () => new RegExp(`^pxl: ${at('broken.json').replace(/[.\\]/g, '\\$&')}: invalid JSON: .+\n$`),
    },
    {
      name: 'an invalid PCF, naming the file and the PCF',
      args: () => ['l2-kernel', at('bad-pcf.json'), '-o', at('k.json')],
      code: 1,
      stderr: () => `pxl: ${at('bad-pcf.json')}: PCF 1: the first breakpoint must be at time 0, but the earliest is breakpoint 0 at time 1\n`,
    },
    {
      name: 'an unknown output extension',
      args: () => ['pdist', at('known.json'), '-o', at('d.csv')],
      code: 2,
      stderr: () => `pxl: cannot write ${at('d.csv')}: the output format is chosen by the file extension, which must be .npy or .json (got extension '.csv')\n`,
    },
    {
      name: 'p < 1',
      args: () => ['pdist', at('known.json'), '-o', at('d.npy'), '--p', '0.5'],
      code: 2,
      stderr: () => "pxl: option '--p <p>' argument '0.5' is invalid. p must be a number >= 1.\n(add --help for usage)\n",
    },
    {
      name: '--p with --op l2-inner',
      args: () => ['cdist', at('cd.json'), at('cd.json'), '-o', at('c.npy'), '--op', 'l2-inner', '--p', '2'],
      code: 2,
      stderr: () => 'pxl: --p is the exponent of --op distance; it cannot be combined with --op l2-inner\n',
    },
    {
      name: 'l2-kernel --layout condensed',
      args: () => ['l2-kernel', at('cd.json'), '-o', at('k.npy'), '--layout', 'condensed'],
      code: 2,
      stderr: () => "pxl: l2-kernel writes only --layout square: scipy's condensed form drops the diagonal, which a kernel matrix needs\n",
    },
    {
      name: 'an output that is an input',
      args: () => ['pdist', at('known.json'), '-o', at('known.json')],
      code: 2,
      stderr: () => `pxl: the output ${at('known.json')} is also an input; writing it would replace the input, so choose another path\n`,
    },
    {
      name: 'an output directory that does not exist',
      args: () => ['pdist', at('known.json'), '-o', at('nowhere/d.npy')],
      code: 1,
      stderr: () => new RegExp(`^pxl: ${at('nowhere/d.npy').replace(/[.\\]/g, '\\$&')}: cannot write to directory .*nowhere: ENOENT.*; create it first \\(mkdir -p .*nowhere\\), or name a file in a directory that exists\n$`),
    },
    {
      name: 'an output "directory" that is a file',
      args: () => ['pdist', at('known.json'), '-o', join(at('cd.json'), 'd.npy')],
      code: 1,
      stderr: () => `pxl: ${join(at('cd.json'), 'd.npy')}: cannot write to directory ${at('cd.json')}: it is a file, not a directory\n`,
    },
    {
      name: 'a result JSON cannot hold',
      args: () => ['pdist', at('huge.json'), '-o', at('d.json')],
      code: 1,
      stderr: () => `pxl: ${at('d.json')}: the result holds Infinity at index [0, 1], which JSON cannot represent; write an .npy file instead\n`,
    },
    { name: 'an unknown option', args: () => ['pdist', at('known.json'), '-o', at('d.npy'), '--fastest'], code: 2, stderr: () => "pxl: unknown option '--fastest'\n(add --help for usage)\n" },
    { name: 'a missing -o', args: () => ['pdist', at('known.json')], code: 2, stderr: () => "pxl: required option '-o, --output <file>' not specified\n(add --help for usage)\n" },
    { name: 'an unknown command', args: () => ['pdistt'], code: 2, stderr: () => /^pxl: unknown command 'pdistt'/ },
  ];

  for (const c of cases) {
    it(`reports ${c.name} with exit code ${c.code} and writes nothing`, async () => {
      const r = await pxl(c.args());
      expect(r.code).toBe(c.code);
      const expected = c.stderr();
      if (typeof expected === 'string') expect(r.stderr).toBe(expected);
      else expect(r.stderr).toMatch(expected);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(await written()).toEqual([]);
    });
  }

  it('refuses an output that is an input reached through a link, and writes through a link output without touching what it pointed to', async () => {
    const { cp, readFile: read, symlink } = await import('node:fs/promises');
    await cp(at('known.json'), at('copy.json'));
    await symlink(at('copy.json'), at('link.json'));
    try {
      const r = await pxl(['cdist', at('link.json'), at('known.json'), '-o', at('copy.json'), '-q']);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `pxl: the output ${at('copy.json')} is also an input; writing it would replace the input, so choose another path\n` });
      expect(await read(at('copy.json'), 'utf8')).toBe(await read(at('known.json'), 'utf8'));
      // The output is renamed over the link itself; the file the link named is an input and stays.
      const through = await pxl(['pdist', at('copy.json'), '-o', at('link.json'), '-q']);
      expect(through.code).toBe(0);
      expect(await read(at('copy.json'), 'utf8')).toBe(await read(at('known.json'), 'utf8'));
      expect(JSON.parse(await read(at('link.json'), 'utf8'))).toEqual(SQUARE);
    } finally {
      await rm(at('copy.json'), { force: true });
      await rm(at('link.json'), { force: true });
    }
  });

  it('with no command prints the usage on stderr and exits 2', async () => {
    const r = await pxl([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^Usage: pxl /);
  });
});

describe('pxl cancellation and atomic output', () => {
  it('leaves an existing output untouched when cancelled, prints "pxl: cancelled" and exits 130', async () => {
    await writeFile(at('d.npy'), 'old');
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy')], { signal: AbortSignal.abort() });
    expect(r).toEqual({ code: 130, stdout: '', stderr: 'pxl: cancelled\n' });
    expect(await readFile(at('d.npy'), 'utf8')).toBe('old');
    expect(await written()).toEqual(['d.npy']);
  });

  it('cancels mid-run (the signal aborts while the bar draws) and leaves no file', async () => {
    const controller = new AbortController();
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy')], { tty: true, signal: controller.signal, onStderr: () => controller.abort() });
    expect(r.code).toBe(130);
    expect(r.stderr.endsWith('pxl: cancelled\n')).toBe(true);
    expect(await written()).toEqual([]);
  });

  it('turns SIGINT during a run into a cancellation, and stops listening afterwards', async () => {
    const before = process.listenerCount('SIGINT');
    // Calls only the listeners the run added, as a delivered SIGINT would: no signal is sent, so
    // the test runner's own handlers (if any) are left alone.
    const ctrlC = (): void => {
      for (const listener of process.listeners('SIGINT').slice(before)) listener('SIGINT');
    };
    const r = await pxl(['pdist', at('known.json'), '-o', at('d.npy')], { tty: true, sigint: true, onStderr: ctrlC });
    expect(r.code).toBe(130);
    expect(r.stderr.endsWith('pxl: cancelled\n')).toBe(true);
    expect(await written()).toEqual([]);
    expect(process.listenerCount('SIGINT')).toBe(before);
  });
});

describe('pxl --help and --version', () => {
  it('describes each command with its defaults', async () => {
    const top = await pxl(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('pdist [options] <input>');
    expect(top.stdout.replace(/\s+/g, ' ')).toContain('Free disk space (and memory, for .json and -o -) is checked before computing.');
    expect(top.stdout).toContain('Exit codes: 0 done, 1 runtime or input error, 2 usage error, 130 cancelled, 141 standard\noutput closed by its reader before the result was written (as "| head" does).');
    const pdistHelp = await pxl(['pdist', '--help']);
    expect(pdistHelp.code).toBe(0);
    expect(pdistHelp.stdout.replace(/\s+/g, ' ')).toContain('--p <p> exponent of the Lp distance, a number >= 1 (default: 1)');
    expect(pdistHelp.stdout.replace(/\s+/g, ' ')).toContain('(choices: "square", "condensed", default: "square")');
    expect((await pxl(['cdist', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('(choices: "distance", "l2-inner", default: "distance")');
    expect((await pxl(['random-pcfs', '--help'])).stdout).toContain('(default: 0)');
  });

  it('prints the package version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(await pxl(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });
});

describe('pxl and the API accept and refuse the same inputs', () => {
  it('refuses an empty PCF ([[]] is one PCF with no breakpoints, not zero PCFs), as pdist does', async () => {
    await writeFile(at('empty-pcf.json'), '[[]]');
    const r = await pxl(['pdist', at('empty-pcf.json'), '-o', at('d.npy')]);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `pxl: ${at('empty-pcf.json')}: PCF 0: has no breakpoints; a PCF starts with a breakpoint at time 0\n` });
    await expect(pdist([[]] as never)).rejects.toThrow(new PcfError(0, 'has no breakpoints; a PCF starts with a breakpoint at time 0'));
    await rm(at('empty-pcf.json'));
  });

  it('refuses a breakpoint [t, v, extra], as pdist does', async () => {
    await writeFile(at('triple.json'), JSON.stringify([C, [[0, 1, 7]]]));
    const r = await pxl(['pdist', at('triple.json'), '-o', at('d.npy')]);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `pxl: ${at('triple.json')}: PCF 1, breakpoint 0: expected a [t, v] pair of numbers, got an array of length 3\n` });
    await expect(pdist([C, [[0, 1, 7]]] as never)).rejects.toThrow(
      new PcfError(1, 'breakpoint 0 is not a [t, v] pair of numbers (got an array of length 3); each breakpoint has exactly two entries, time and value'),
    );
    await rm(at('triple.json'));
  });

  it("writes --layout condensed in the order of the API's DistanceMatrix.condensed", async () => {
    expect((await pxl(['pdist', at('known.json'), '-o', at('c.npy'), '--layout', 'condensed'])).code).toBe(0);
    const api = await pdist([A, B, C, D] as never);
    expect(Array.from((await readNpy('c.npy')).data)).toEqual(Array.from(api.condensed));
    expect(Array.from(api.condensed)).toEqual(CONDENSED);
  });

  it('gives no wrong zeros for --p 1000 and --p 1e6: every off-diagonal distance is the API\'s, and positive', async () => {
    const set = randomPcfs({ n: 40, points: 10, seed: 5 });
    await writeFile(at('p40.json'), JSON.stringify(Array.from({ length: 40 }, (_, i) => Array.from({ length: 10 }, (_, k) => [set.times[i * 10 + k], set.values[i * 10 + k]]))));
    for (const p of ['1000', '1e6']) {
      expect((await pxl(['pdist', at('p40.json'), '-o', at('d.npy'), '--p', p, '--layout', 'condensed', '-q'])).code).toBe(0);
      const cli = Array.from((await readNpy('d.npy')).data);
      const api = Array.from((await pdist(set, { p: Number(p) })).condensed);
      expect(cli).toEqual(api);
      expect(cli.filter((d) => !(d > 0 && d < 1))).toEqual([]);
      await rm(at('d.npy'));
    }
    await rm(at('p40.json'));
  });

  it('refuses random-pcfs beyond what a PCF set holds before allocating anything, with exit code 2', async () => {
    const r = await pxl(['random-pcfs', '--n', '40000000', '--points', '100', '-o', at('r.json')]);
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'pxl: --n 40000000 --points 100 make 4000000000 breakpoints; a PCF set holds at most 2147483647, so lower --n or --points\n' });
    expect(() => randomPcfs({ n: 40_000_000, points: 100 })).toThrow(
      new OptionError('n * points must be at most 2147483647 (the most breakpoints a PCF set holds), got 40000000 * 100 = 4000000000; lower n or points'),
    );
    expect(await written()).toEqual([]);
  });
});

describe('pxl --memory, --resume and the checks before computing', () => {
  it('parses --memory sizes and refuses a malformed one, and --resume with a .json output, with exit code 2', async () => {
    expect((await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '--memory', '1.5M', '-q'])).code).toBe(0);
    const bad = await pxl(['pdist', at('known.json'), '-o', at('e.npy'), '--memory', '12X']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("option '--memory <size>' argument '12X' is invalid. expected a size such as 512M, 2G or 1073741824 (K, M, G, T are powers of 1024).");
    const tiny = await pxl(['pdist', at('known.json'), '-o', at('e.npy'), '--memory', '1k']);
    expect(tiny.code).toBe(2);
    expect(tiny.stderr).toContain("option '--memory <size>' argument '1k' is invalid. it is 1024 bytes; the least is 1M (1048576 bytes), below which a block would hold a handful of pairs.");
    // Well-formed sizes out of range are told what is wrong with them, not what a size looks like.
    const zero = await pxl(['pdist', at('known.json'), '-o', at('e.npy'), '--memory', '0']);
    expect(zero.stderr).toContain("argument '0' is invalid. it is 0 bytes; the least is 1M (1048576 bytes)");
    const huge = await pxl(['pdist', at('known.json'), '-o', at('e.npy'), '--memory', '99999999999T']);
    expect(huge.stderr).toContain("argument '99999999999T' is invalid. it is more than 9007199254740991 bytes, the most a size here can be.");
    expect([zero.code, huge.code]).toEqual([2, 2]);
    // Gi as ulimit and Kubernetes write it, like GiB and G.
    expect((await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '--memory', '2Gi', '-q'])).code).toBe(0);
    expect((await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '--memory', '5i', '-q'])).code).toBe(2);
    const json = await pxl(['pdist', at('known.json'), '-o', at('d.json'), '--resume']);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe('pxl: --resume continues a partial .npy output file; a .json output is written whole at the end, so there is nothing to resume\n');
    expect(await written()).toEqual(['d.npy']);
  });

  it('says in the summary when --resume found nothing to take over', async () => {
    const fresh = await pxl(['pdist', at('known.json'), '-o', at('d.npy'), '--resume']);
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toMatch(/, computed on \d+ CPU cores?; --resume: no finished block to take over, all computed\n$/);
  });

  it('refuses --format npy into a file not named .npy in its own words, with exit code 2', async () => {
    const dat = await pxl(['pdist', at('known.json'), '-o', at('d.dat'), '--format', 'npy']);
    expect(dat.code).toBe(2);
    expect(dat.stderr).toBe(`pxl: a .npy output is written block by block into a file named FILE.npy; give -o a name ending in .npy instead of ${at('d.dat')}, or write to standard output with -o - --format npy\n`);
    expect(await written()).toEqual([]);
  });

  it('refuses an .npy output larger than the free disk space, and a .json result larger than memory, before computing', async () => {
    const { capacityProbe } = await import('../src/blocks/capacityCheck.js');
    const disk = vi.spyOn(capacityProbe, 'freeDiskBytes').mockResolvedValue(100);
    const full = await pxl(['pdist', at('known.json'), '-o', at('d.npy')]);
    disk.mockRestore();
    expect(full.code).toBe(1);
    expect(full.stderr).toContain('the square float64 result of pdist of 4 PCFs needs 256 bytes on disk, but only 100 bytes is free');
    expect(full.stderr).toContain("--layout condensed (layout: 'condensed'): 176 bytes; --dtype float32 (dtype: 'float32'): 192 bytes; both: 152 bytes; -o/out naming a file on a disk with more free space");
    const memory = vi.spyOn(capacityProbe, 'availableMemoryBytes').mockReturnValue(100);
    const small = await pxl(['pdist', at('known.json'), '-o', at('d.json')]);
    memory.mockRestore();
    expect(small.code).toBe(1);
    expect(small.stderr).toContain('needs 256 bytes of memory, but only 100 bytes is available; nothing was computed. To fit: -o ');
    expect(await written()).toEqual([]);
  });

  it('refuses a .json output whose least text (2 bytes an entry) exceeds the free disk space, before computing', async () => {
    const { capacityProbe } = await import('../src/blocks/capacityCheck.js');
    const disk = vi.spyOn(capacityProbe, 'freeDiskBytes').mockResolvedValue(20);
    const full = await pxl(['pdist', at('known.json'), '-o', at('d.json')]);
    disk.mockRestore();
    expect(full.code).toBe(1);
    expect(full.stderr).toBe(`pxl: ${at('d.json')}: the .json text of the float64 result of pdist on 4 PCFs, at least 2 bytes an entry, needs 32 bytes on disk, but only 20 bytes is free in ${dir}; nothing was computed. To fit: -o naming a file on a disk with more free space\n`);
    expect(await written()).toEqual([]);
  });

  it('offers, for a result held in memory, only the ways out that make it fit: --layout condensed for pdist, both it and float32, not float32 past the array limit, and no smaller result that still exceeds the memory available', async () => {
    const { capacityProbe } = await import('../src/blocks/capacityCheck.js');
    const memory = vi.spyOn(capacityProbe, 'availableMemoryBytes').mockReturnValue(200);
    const small = await pxl(['pdist', at('known.json'), '-o', at('d.json')]);
    memory.mockRestore();
    expect(small.code).toBe(1);
    expect(small.stderr).toBe(`pxl: the float64 result of pdist on 4 PCFs, held in memory to be written as text, needs 256 bytes of memory, but only 200 bytes is available; nothing was computed. To fit: -o ${at('d')}.npy (written block by block, never whole in memory); --layout condensed: 96 bytes; --dtype float32: 128 bytes; both: 48 bytes\n`);
    // 65,537 PCFs: a square of 65537^2 > 2^32 elements, in float32 too; the condensed half is below.
    await writeFile(at('many.json'), `[${Array.from({ length: 65_537 }, () => '[[0,0]]').join(',')}]`);
    const roomy = vi.spyOn(capacityProbe, 'availableMemoryBytes').mockReturnValue(64e9);
    const many = await pxl(['pdist', at('many.json'), '-o', '-', '--format', 'npy']);
    // With 16 GB neither the condensed half (34 GB with its copy) nor its float32 form (17 GB) fits: only a file is offered.
    roomy.mockReturnValue(16e9);
    const manyHere = await pxl(['pdist', at('many.json'), '-o', '-', '--format', 'npy']);
    roomy.mockRestore();
    await rm(at('many.json'));
    expect(many.code).toBe(1);
    expect(many.stderr).toBe('pxl: the float64 result of pdist on 65537 PCFs, held in memory written to standard output as npy, has 4295098369 elements, more than one array holds (4294967296); nothing was computed. To fit: -o FILE.npy (written block by block, never whole in memory); --layout condensed: 34.36 GB (34360262656 bytes); both: 17.18 GB (17180131328 bytes)\n');
    expect(manyHere.code).toBe(1);
    expect(manyHere.stderr).toBe('pxl: the float64 result of pdist on 65537 PCFs, held in memory written to standard output as npy, has 4295098369 elements, more than one array holds (4294967296); nothing was computed. To fit: -o FILE.npy (written block by block, never whole in memory)\n');
    // With 100 bytes the condensed half (96 bytes) and both (48 bytes) fit, float32 (128 bytes) does not.
    const tightMemory = vi.spyOn(capacityProbe, 'availableMemoryBytes').mockReturnValue(100);
    const tight = await pxl(['pdist', at('known.json'), '-o', at('d.json')]);
    tightMemory.mockRestore();
    expect(tight.stderr).toBe(`pxl: the float64 result of pdist on 4 PCFs, held in memory to be written as text, needs 256 bytes of memory, but only 100 bytes is available; nothing was computed. To fit: -o ${at('d')}.npy (written block by block, never whole in memory); --layout condensed: 96 bytes; both: 48 bytes\n`);
  });
});
