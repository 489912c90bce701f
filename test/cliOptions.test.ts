import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELP_MAX_SET_BREAKPOINTS } from '../src/cli/commands.js';
import { run } from '../src/cli/main.js';
import { decodeNpy } from '../src/pcf/npy.js';
import { MAX_SET_BREAKPOINTS } from '../src/pcf/pcfSet.js';
import { gpu } from './fixtures/wgslGpu.js';
import { expectAllClose } from './helpers/closeTo.js';

/**
 * The CLI's options shared by the pairwise commands (--cores, --device, --format, `-` for standard
 * input and output), `pxl info`, and what the help texts promise. Pipes are tested through real
 * child processes of bin/pxl.js (which runs the build, as `npm test` makes it); the rest in-process.
 */

const BIN = fileURLToPath(new URL('../bin/pxl.js', import.meta.url));
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

/** A stream that records what is written: text, or bytes (a result written with -o -). */
class Capture {
  readonly chunks: Buffer[] = [];
  readonly isTTY = false;
  write(chunk: string | Uint8Array): boolean {
    this.chunks.push(Buffer.from(chunk));
    return true;
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
  get bytes(): Uint8Array {
    return new Uint8Array(Buffer.concat(this.chunks));
  }
}

interface Ran {
  code: number;
  stdout: Capture;
  stderr: string;
}

async function pxl(args: string[], stdin?: Uint8Array): Promise<Ran> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await run(args, { stdout, stderr, interceptSigint: false, ...(stdin && { stdin: Readable.from([stdin]) }) });
  return { code, stdout, stderr: stderr.text };
}

interface Child {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Runs bin/pxl.js with `input` on its stdin (or a pipe from `from`); killed by pid after 60 s. */
function child(args: readonly string[], input?: Uint8Array | NodeJS.ReadableStream): { done: Promise<Child>; stdout: NodeJS.ReadableStream } {
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let err = '';
  const timer = setTimeout(() => process.kill(proc.pid!, 'SIGKILL'), 60_000);
  const done = new Promise<Child>((resolve) => {
    proc.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
  });
  if (input instanceof Uint8Array) proc.stdin.end(input);
  else if (input !== undefined) input.pipe(proc.stdin);
  else proc.stdin.end();
  return { done, stdout: proc.stdout };
}

// Known answers worked by hand. A = 10 on [0,2), 5 on [2,3); B = 5 on [0,6); C = 4 on [0,3).
// L1: |A-B| = 5*2 + 0*1 + 5*3 = 25, |A-C| = 6*2 + 1 = 13, |B-C| = 1*3 + 5*3 = 18.
const A = [[0, 10], [2, 5], [3, 0]];
const B = [[0, 5], [6, 0]];
const C = [[0, 4], [3, 0]];
const SQUARE = [
  [0, 25, 13],
  [25, 0, 18],
  [13, 18, 0],
];
const KNOWN = new TextEncoder().encode(JSON.stringify({ pcfs: [A, B, C] }));

let dir: string;
const at = (name: string): string => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pxl-cli-options-'));
  await writeFile(at('known.json'), KNOWN);
  await writeFile(at('bom.json'), Buffer.concat([BOM, KNOWN]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function rows(bytes: Uint8Array): number[][] {
  const npy = decodeNpy(bytes);
  const n = npy.shape[0]!;
  return Array.from({ length: n }, (_, i) => Array.from(npy.data.subarray(i * n, (i + 1) * n) as ArrayLike<number>));
}

describe('standard input and output', () => {
  it('reads JSON from standard input with - and writes JSON to standard output with -o - --format json (child process, pipes)', async () => {
    const r = await child(['pdist', '-', '-o', '-', '--format', 'json'], KNOWN).done;
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.toString())).toEqual(SQUARE);
    expect(r.stderr).toMatch(/^pdist: 3 PCFs, 3 pairs in .* -> standard output, computed on \d+ CPU cores?\n$/);
  });

  it('writes an .npy to standard output with --format npy, and passes a pipe from random-pcfs (child processes)', async () => {
    const npy = await child(['pdist', '-', '-o', '-', '--format', 'npy', '-q'], KNOWN).done;
    expect(npy).toMatchObject({ code: 0, stderr: '' });
    expect(rows(new Uint8Array(npy.stdout))).toEqual(SQUARE);

    const source = child(['random-pcfs', '--n', '30', '--points', '5', '--seed', '3', '-o', '-', '--format', 'json', '-q']);
    const piped = child(['pdist', '-', '-o', at('piped.npy'), '-q'], source.stdout);
    expect((await source.done).code).toBe(0);
    expect(await piped.done).toMatchObject({ code: 0, stderr: '' });
    await run(['random-pcfs', '--n', '30', '--points', '5', '--seed', '3', '-o', at('random.json'), '-q'], { interceptSigint: false });
    expect((await pxl(['pdist', at('random.json'), '-o', at('file.npy'), '-q'])).code).toBe(0);
    expect(await readFile(at('piped.npy'))).toEqual(await readFile(at('file.npy')));
  });

  it('accepts a UTF-8 byte-order mark before the JSON, on standard input and in a file', async () => {
    const piped = await pxl(['pdist', '-', '-o', '-', '--format', 'json', '-q'], new Uint8Array([...BOM, ...KNOWN]));
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout.text)).toEqual(SQUARE);
    expect((await pxl(['pdist', at('bom.json'), '-o', at('bom.npy'), '-q'])).code).toBe(0);
    expect(rows(new Uint8Array(await readFile(at('bom.npy'))))).toEqual(SQUARE);
  });

  it('reads - once for cdist - -, X against itself', async () => {
    const r = await pxl(['cdist', '-', '-', '-o', '-', '--format', 'json', '-q'], KNOWN);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.text)).toEqual(SQUARE);
  });

  it('reads .npz from standard input, as random-pcfs -o - --format npz writes it (child processes, pipes)', async () => {
    const source = child(['random-pcfs', '--n', '30', '--points', '5', '--seed', '3', '-o', '-', '--format', 'npz', '-q']);
    const piped = child(['pdist', '-', '-o', at('piped-npz.npy'), '-q'], source.stdout);
    expect((await source.done).code).toBe(0);
    expect(await piped.done).toMatchObject({ code: 0, stderr: '' });
    await run(['random-pcfs', '--n', '30', '--points', '5', '--seed', '3', '-o', at('random-npz.npz'), '-q'], { interceptSigint: false });
    expect((await pxl(['pdist', at('random-npz.npz'), '-o', at('file-npz.npy'), '-q'])).code).toBe(0);
    expect(await readFile(at('piped-npz.npy'))).toEqual(await readFile(at('file-npz.npy')));
    const broken = await pxl(['pdist', '-', '-o', at('broken.npy')], new Uint8Array((await readFile(at('random-npz.npz'))).subarray(0, 300)));
    expect(broken).toMatchObject({ code: 1, stderr: 'pxl: standard input: malformed zip archive: invalid zip data\n' });
  });

  it('says so when standard input is empty', async () => {
    const r = await pxl(['pdist', '-', '-o', at('empty.npy')], new Uint8Array(0));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: 'pxl: standard input: is empty: pipe PCFs into pxl (JSON or .npz), or name a file instead of -\n' });
  });

  it('stops at once, exit code 130, when cancelled while its input is still being read (a standard input that sends no more)', async () => {
    const stdout = new Capture();
    const stderr = new Capture();
    const controller = new AbortController();
    const stdin = (async function* () {
      yield new TextEncoder().encode('[[[0, 1], [2, 0]],');
      setTimeout(() => controller.abort(), 50);
      await new Promise(() => {});
    })();
    const code = await run(['pdist', '-', '-o', '-', '--format', 'json'], { stdout, stderr, stdin, interceptSigint: false, signal: controller.signal });
    expect({ code, stderr: stderr.text, stdout: stdout.text }).toEqual({ code: 130, stderr: 'pxl: cancelled\n', stdout: '' });
  }, 20_000);

  it('names standard input in the errors of its JSON', async () => {
    const r = await pxl(['pdist', '-', '-o', '-', '--format', 'json'], new TextEncoder().encode('[[[0, 1], [2, 0]]'));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^pxl: standard input: invalid JSON: /);
  });

  it('stops quietly when the reader closes standard output early (| head): help and --version exit 0, a result 141, no message or stack', async () => {
    const closedEarly = (args: readonly string[]): Promise<{ code: number | null; stderr: string }> => {
      const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      // Our end of the pipe closes before the child has started, so its first write finds no reader.
      proc.stdout.destroy();
      let stderr = '';
      proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => process.kill(proc.pid!, 'SIGKILL'), 60_000);
      return new Promise((resolve) =>
        proc.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        }),
      );
    };
    expect(await closedEarly(['--help'])).toEqual({ code: 0, stderr: '' });
    expect(await closedEarly(['--version'])).toEqual({ code: 0, stderr: '' });
    expect(await closedEarly(['pdist', at('known.json'), '-o', '-', '--format', 'npy'])).toEqual({ code: 141, stderr: '' });
    expect(await closedEarly(['random-pcfs', '--n', '50', '--points', '5', '-o', '-', '--format', 'json'])).toEqual({ code: 141, stderr: '' });
  });

  it.runIf(existsSync('/dev/full'))('says what to change, exit code 1 and no stack, when standard output is on a full disk (> /dev/full)', () => {
    const full = openSync('/dev/full', 'w');
    try {
      const onFull = (args: readonly string[]) => {
        const r = spawnSync(process.execPath, [BIN, ...args], { stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 60_000 });
        return { code: r.status, stderr: r.stderr };
      };
      const advice = 'ENOSPC: no space left on device, write; free space on the disk standard output is redirected to, or redirect it to another disk\n';
      expect(onFull(['--version'])).toEqual({ code: 1, stderr: `pxl: cannot write to standard output: ${advice}` });
      expect(onFull(['info'])).toEqual({ code: 1, stderr: `pxl: cannot write to standard output: ${advice}` });
      expect(onFull(['pdist', at('known.json'), '-o', '-', '--format', 'npy'])).toEqual({ code: 1, stderr: `pxl: standard output: cannot write: ${advice}` });
    } finally {
      closeSync(full);
    }
  });

  it('refuses -o - without --format, a --format that contradicts the extension, and --resume to standard output, with exit code 2', async () => {
    const cases: Array<[string[], string]> = [
      [['pdist', at('known.json'), '-o', '-'], 'pxl: -o - writes to standard output, which has no extension to choose the format by: add --format npy or --format json\n'],
      [['pdist', at('known.json'), '-o', at('d.npy'), '--format', 'json'], `pxl: -o ${at('d.npy')} names the .npy format but --format is json: change the extension or leave out --format\n`],
      [['pdist', at('known.json'), '-o', '-', '--format', 'npy', '--resume'], 'pxl: --resume continues a partial .npy output file; standard output is written whole at the end, so there is nothing to resume\n'],
      [['random-pcfs', '--n', '2', '--points', '2', '-o', '-'], 'pxl: -o - writes to standard output, which has no extension to choose the format by: add --format json or --format npz\n'],
    ];
    for (const [args, message] of cases) {
      const r = await pxl(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 2, stderr: message });
    }
  });

  it('writes random PCFs to standard output as .npz with --format npz', async () => {
    const r = await pxl(['random-pcfs', '--n', '4', '--points', '3', '-o', '-', '--format', 'npz', '-q']);
    expect(r.code).toBe(0);
    await writeFile(at('stdout.npz'), r.stdout.bytes);
    expect((await pxl(['pdist', at('stdout.npz'), '-o', at('npz.npy'), '-q'])).code).toBe(0);
    expect(decodeNpy(new Uint8Array(await readFile(at('npz.npy')))).shape).toEqual([4, 4]);
  });
});

describe('--cores and --device', () => {
  it('computes on --cores N cores, as the summary line and pxl info say', async () => {
    const r = await pxl(['pdist', at('known.json'), '-o', at('one.npy'), '--cores', '1']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/, computed on 1 CPU core\n$/);
    expect(rows(new Uint8Array(await readFile(at('one.npy'))))).toEqual(SQUARE);
    const all = availableParallelism();
    const most = await pxl(['pdist', at('known.json'), '-o', at('all.npy'), '--cores', String(all)]);
    expect(most.stderr).toMatch(new RegExp(`, computed on ${all} CPU cores?\\n$`));
    const info = await pxl(['info', '--cores', '1', '--json']);
    expect(info.code).toBe(0);
    expect(JSON.parse(info.stdout.text).cpu.cores).toBe(1);
  });

  it('refuses --cores that is not a whole number from 1 to the cores of this machine, on every command that takes it', async () => {
    const all = availableParallelism();
    const message = `expected a whole number of CPU cores from 1 to ${all}, the cores of this machine (leave out --cores to use all of them).`;
    const commands = [
      ['pdist', at('known.json'), '-o', at('x.npy')],
      ['cdist', at('known.json'), at('known.json'), '-o', at('x.npy')],
      ['l2-kernel', at('known.json'), '-o', at('x.npy')],
      ['info'],
      ['worker', '--nats', 'nats://127.0.0.1:1'],
    ];
    for (const command of commands) {
      for (const cores of ['0', '-1', '1.5', String(all + 1), '999']) {
        const r = await pxl([...command, `--cores=${cores}`]);
        expect({ command, cores, code: r.code, stderr: r.stderr }).toEqual({ command, cores, code: 2, stderr: `pxl: option '--cores <n>' argument '${cores}' is invalid. ${message}\n(add --help for usage)\n` });
      }
    }
  });

  it('refuses --cores with --device gpu, --dtype float64 with a GPU, --cores 0, and --cores or --device with --nats', async () => {
    const cases: Array<[string[], string]> = [
      [['pdist', at('known.json'), '-o', at('x.npy'), '--device', 'gpu', '--cores', '2'], 'pxl: --cores counts the CPU cores that compute, and --device gpu uses none: leave out --cores, or use --device all\n'],
      [['pdist', at('known.json'), '-o', at('x.npy'), '--device', 'all', '--dtype', 'float64'], 'pxl: --device all computes in float32 (WebGPU has no float64): leave out --dtype float64, or use --device cpu\n'],
      [['cdist', at('known.json'), at('known.json'), '-o', at('x.npy'), '--nats', 'nats://127.0.0.1:1', '--cores', '2'], "pxl: --cores and --device choose this machine's devices, but with --nats the blocks run on workers: leave them out here and give them to pxl worker\n"],
    ];
    for (const [args, message] of cases) {
      const r = await pxl(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 2, stderr: message });
    }
    for (const [flag, value] of [['--nats-pass', 'x'], ['--nats-cert', 'c.pem'], ['--nats-key', 'k.pem'], ['--replicas', '3'], ['--nats-user', 'u'], ['--ack-wait', '1000']]) {
      const r = await pxl(['pdist', at('known.json'), '-o', at('x.npy'), flag!, value!]);
      expect({ flag, code: r.code, stderr: r.stderr }).toEqual({ flag, code: 2, stderr: `pxl: ${flag} belongs to a cluster run; add --nats URL, or leave it out\n` });
    }
    const id = await pxl(['worker', '--nats', 'nats://127.0.0.1:1', '--id', 'a b']);
    expect({ code: id.code, stderr: id.stderr }).toEqual({ code: 2, stderr: 'pxl: --id (id) must be 1 to 100 letters, digits or . : @ - _, got "a b"\n' });
    const zero = await pxl(['l2-kernel', at('known.json'), '-o', at('x.npy'), '--cores', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain("option '--cores <n>' argument '0' is invalid. expected a whole number of CPU cores from 1 to");
    const device = await pxl(['pdist', at('known.json'), '-o', at('x.npy'), '--device', 'tpu']);
    expect(device.code).toBe(2);
    expect(device.stderr).toContain('Allowed choices are cpu, gpu, all.');
  });

  // Reference: the CPU cores in float32, which integrate the float32 inputs in float64 and round
  // once; the GPU sums in float32: entries agree to 5e-6 of the largest (as test/webgpuPcf.test.ts).
  describe.runIf(gpu.run)('on a GPU', () => {
    it('--device gpu and --device all give the float32 CPU result within float32 accumulation error', async () => {
      await run(['random-pcfs', '--n', '60', '--points', '12', '--seed', '5', '-o', at('gpu-in.json'), '-q'], { interceptSigint: false });
      expect((await pxl(['pdist', at('gpu-in.json'), '-o', at('cpu32.npy'), '--dtype', 'float32', '-q'])).code).toBe(0);
      const cpu = decodeNpy(new Uint8Array(await readFile(at('cpu32.npy'))));
      let scale = 1;
      for (const v of cpu.data as Float32Array) scale = Math.max(scale, Math.abs(v));
      for (const device of ['gpu', 'all']) {
        const r = await pxl(['pdist', at('gpu-in.json'), '-o', at(`${device}.npy`), '--device', device]);
        expect(r.code).toBe(0);
        expect(r.stderr).toMatch(device === 'gpu' ? /, computed on the GPU\n$/ : /, computed on \d+ CPU cores? and the GPU\n$/);
        const out = decodeNpy(new Uint8Array(await readFile(at(`${device}.npy`))));
        expect(out.dtype).toBe('float32');
        expect(out.shape).toEqual([60, 60]);
        expectAllClose(out.data as Float32Array, cpu.data as Float32Array, { atol: 5e-6 * scale });
      }
    }, 120_000);
  });
});

describe.runIf(gpu.run)("the GPU libraries' own messages", () => {
  // Dawn and the drivers print to fd 2 while pxl looks for an adapter (on llvmpipe at least
  // "maxDynamicUniformBuffersPerPipelineLayout artificially reduced ..."). Each command runs in a
  // process of its own whose stderr is a pipe to `cat`, as in a terminal pipeline.
  const stderrOf = async (args: readonly string[]): Promise<string> => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const env = { ...process.env, PXL_DEBUG: '', NODE: process.execPath, BIN };
    const { stdout } = await promisify(execFile)('sh', ['-c', `"$NODE" "$BIN" ${args.join(' ')} 2>&1 >/dev/null | cat`], { env, timeout: 60_000 });
    return stdout;
  };

  it('stay off the terminal with --device gpu or all, and --verbose lets them through', async () => {
    const found = JSON.parse((await pxl(['info', '--device', 'gpu', '--json'])).stdout.text) as { gpu: { device: string } };
    const input = at('known.json');
    for (const command of [`pdist ${input} -o ${at('v.npy')} -q`, `cdist ${input} ${input} -o ${at('v.npy')} -q`, `l2-kernel ${input} -o ${at('v.npy')} -q`, 'info']) {
      for (const device of ['gpu', 'all']) {
        const args = [...command.split(' '), '--device', device];
        expect({ args, stderr: await stderrOf(args) }).toEqual({ args, stderr: '' });
        // Dawn's OpenGL backend always reports the limits it lowers; other backends may say nothing.
        if (found.gpu.device.includes('OpenGL')) expect(await stderrOf([...args, '--verbose'])).toContain('artificially reduced');
      }
    }
  }, 120_000);
});

describe('pxl info', () => {
  it('prints versions, cores, memory, and does not look for a GPU unless asked', async () => {
    const r = await pxl(['info']);
    expect(r.code).toBe(0);
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const lines = r.stdout.text.trimEnd().split('\n');
    expect(lines.map((l) => l.slice(0, l.indexOf(':')))).toEqual(['pxl', 'node', 'webgpu', 'platform', 'cpu', 'memory', 'gpu']);
    expect(lines[0]).toBe(`pxl: ${pkg.version}`);
    expect(lines[1]).toBe(`node: ${process.version}`);
    expect(lines[4]).toMatch(/^cpu: \d+ cores?/);
    expect(lines[5]).toMatch(/^memory: \d+ MiB total, \d+ MiB free$/);
    expect(lines[6]).toBe('gpu: not looked for (add --device gpu or --device all)');
    const json = JSON.parse((await pxl(['info', '--json'])).stdout.text) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['pxl', 'node', 'webgpu', 'platform', 'cpu', 'memory', 'gpu']);
    expect(json.gpu).toBeNull();
  });

  it.runIf(gpu.run)('describes the GPU with --device gpu', async () => {
    const json = JSON.parse((await pxl(['info', '--device', 'gpu', '--json'])).stdout.text) as { gpu: { found: boolean; device?: string }; cpu: { cores: number } };
    expect(json.gpu.found).toBe(true);
    expect(json.gpu.device).toEqual(expect.any(String));
    expect(json.cpu.cores).toBe(0);
  }, 60_000);
});

describe('help texts', () => {
  const help = async (...args: string[]): Promise<string> => (await pxl([...args, '--help'])).stdout.text.replace(/\s+/g, ' ');

  it('lists only the layouts l2-kernel writes', async () => {
    const text = await help('l2-kernel');
    expect(text).toContain('--layout <layout> square, the only layout l2-kernel writes');
    expect(text).not.toContain('"condensed"');
    expect(await help('pdist')).toContain('(choices: "square", "condensed", default: "square")');
  });

  it('gives the defaults and bounds of --replicas and --ack-wait', async () => {
    for (const command of ['pdist', 'cdist', 'l2-kernel', 'blocks']) {
      const text = await help(command);
      expect(text).toContain("--replicas <n> with --nats: copies a NATS cluster keeps of the run's streams (default 1; at most its number of servers, and 5)");
      expect(text).toContain("--ack-wait <ms> with --nats: milliseconds before a silent worker's block goes to another worker (default 10000; 100 to 3600000)");
    }
  });

  it('says what -q silences on every command', async () => {
    for (const command of ['pdist', 'cdist', 'l2-kernel']) expect(await help(command)).toContain('-q, --quiet print no progress bar, summary line or cluster status lines on stderr (errors are still printed)');
    expect(await help('random-pcfs')).toContain('-q, --quiet print no line on stderr saying what was written (errors are still printed)');
    expect(await help('worker')).toContain('-q, --quiet print no log lines on stderr (errors are still printed)');
  });

  it('marks the required options, and offers --cores, --device and --format on the pairwise commands', async () => {
    for (const command of ['pdist', 'cdist', 'l2-kernel']) {
      const text = await help(command);
      expect(text).toContain('-o, --output <file> required: the file to write, or - for standard output.');
      expect(text).toContain('--cores <n> CPU cores to compute on');
      expect(text).toContain('--device <device> cpu: the CPU cores; gpu: the GPU through WebGPU');
      expect(text).toContain('(choices: "cpu", "gpu", "all", default: "cpu")');
      expect(text).toContain('--format <format> format of OUTPUT, needed with -o -');
    }
    expect(await help('worker')).toContain('--nats <url> required: the NATS server');
    for (const command of ['pdist', 'cdist', 'l2-kernel', 'info', 'worker']) expect(await help(command)).toContain(`at most all ${availableParallelism()} of this machine (default: all)`);
    const random = await help('random-pcfs');
    expect(random).toContain('--n <n> required: number of PCFs');
    expect(random).toContain('--points <m> required: breakpoints per PCF');
    expect(random).toContain(`at most ${MAX_SET_BREAKPOINTS}`);
    expect(HELP_MAX_SET_BREAKPOINTS).toBe(MAX_SET_BREAKPOINTS);
  });

  it('answers --version without loading the commands, and -V alike', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect(await pxl([flag])).toMatchObject({ code: 0, stderr: '' });
    expect((await pxl(['-V'])).stdout.text).toBe(`${pkg.version}\n`);
    const r = await child(['--version']).done;
    expect(r).toEqual({ code: 0, stdout: Buffer.from(`${pkg.version}\n`), stderr: '' });
  });
});

describe('bin/pxl.js as an executable', () => {
  // Through its first line, as a shell (or npm's bin link) runs it; `env` finds this test's node first.
  const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  const direct = (code: string) => spawnSync(BIN, ['--version'], { encoding: 'utf8', env: { ...process.env, PATH, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(code)}` } });

  it('has a first line that every env runs (BusyBox, as on Alpine, has no env -S)', async () => {
    const first = (await readFile(BIN, 'utf8')).split('\n')[0];
    expect(first).toBe('#!/usr/bin/env node');
  });

  it('says so, with exit code 1, when a run stops with its work unfinished and nothing to wait for (Node would end it with 13 and no word)', () => {
    const r = spawnSync(process.execPath, ['--import', fileURLToPath(new URL('./fixtures/stuckCli.mjs', import.meta.url)), BIN, 'pdist', 'x.json', '-o', 'x.npy'], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 1, stderr: 'pxl: internal error: the command stopped with its work unfinished and nothing left to wait for, so its output was not written; please report it with the command line\n' });
  });

  it.skipIf(process.platform === 'win32')('runs through its first line', () => {
    const r = direct('process.stderr.write(JSON.stringify(process.argv.slice(2)) + "\\n")');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(JSON.parse(r.stderr.trim()) as string[]).toEqual(['--version']);
  });
});
