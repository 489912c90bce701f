// Input benchmark: loading PCF files as `pxl random-pcfs` writes them (20 breakpoints per PCF,
// numbers printed with up to 17 digits), each load in its own process so its peak RSS is its own.
//   - whole-string: the reader before streaming (readFile to one string, JSON.parse, pcfSetFrom);
//     the baseline, at a size it can still handle
//   - streamparser: the @streamparser/json streaming parser from npm, each PCF then put into
//     typed arrays as the stream reader does
//   - one-pass: pxl's byte-level scanner on this thread, start to end (readPcfJsonOnePass, what
//     readPcfFile did for every .json before the parts)
//   - parts: readPcfFile on .json: from 64 MiB on, cut between PCFs and read on one thread per core
//   - npz: readPcfFile on the same PCFs as .npz (np.savez's layout)
// "memory" is peak RSS minus the RSS before loading, over the bytes of the resulting typed arrays
// (times, values, offsets); the goal is at most 2. cpuSeconds is the child's user + system time
// over all its threads; the load average before each size is printed with it. Prints one JSON document.
//   npm run build && node bench/input.mjs      (PXL_BENCH_INPUT_MB=64,1024 to pick sizes; the
//   first size runs every reader, the others one-pass, parts and npz only; PXL_BENCH_INPUT_REPEAT=3
//   loads each file that many times, alternating the readers, and reports medians: on a shared
//   machine wall times vary by 2x, so cpuSeconds, the child's user + system time, is given too;
//   PXL_BENCH_INPUT_METHODS=one-pass,parts runs only those readers)
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { median, printJson, sig } from './lib/stats.mjs';

const POINTS = 20;
/** Bytes of JSON per PCF of 20 breakpoints, as random-pcfs prints them (measured). */
const JSON_BYTES_PER_PCF = 790;

/**
 * CPU seconds of each thread of this process seen so far (Linux: /proc/self/task), sampled every
 * 20 ms: on a machine shared with other work the wall time says little, while the busiest
 * thread's CPU time is about what the load takes on idle cores. Threads that end lose at most
 * their last 20 ms.
 */
function threadCpu() {
  const seen = new Map();
  const sample = () => {
    let tids = [];
    try {
      tids = readdirSync('/proc/self/task');
    } catch {
      return;
    }
    for (const tid of tids) {
      try {
        const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
        seen.set(tid, (Number(fields[11]) + Number(fields[12])) / 100); // utime + stime, in 1/100 s
      } catch {
        // the thread ended between the listing and the read
      }
    }
  };
  const timer = setInterval(sample, 20);
  return () => {
    clearInterval(timer);
    sample();
    return Math.max(0, ...seen.values());
  };
}

async function child(method, path) {
  const { readPcfFile, pcfSetFromNested } = await import('../dist/index.js');
  const { readPcfJsonOnePass } = await import('../dist/pcf/pcfFileRead.js');
  const base = process.memoryUsage().rss;
  const started = performance.now();
  const cpu = process.cpuUsage();
  const busiest = threadCpu();
  let set;
  if (method === 'whole-string') {
    const root = JSON.parse(await readFile(path, 'utf8'));
    set = pcfSetFromNested(root.pcfs);
  } else if (method === 'streamparser') {
    const { JSONParser } = await import('@streamparser/json');
    const { writeBreakpoints } = await import('../dist/pcf/pcf.js');
    // Columns grow by doubling, as a reader without the final count must.
    let times = new Float64Array(1 << 16);
    let values = new Float64Array(1 << 16);
    const offsets = [0];
    let used = 0;
    const parser = new JSONParser({ paths: ['$.pcfs.*'], keepStack: false });
    parser.onValue = ({ value }) => {
      if (used + value.length > times.length) {
        const t = new Float64Array(times.length * 2); t.set(times); times = t;
        const v = new Float64Array(values.length * 2); v.set(values); values = v;
      }
      writeBreakpoints(value, offsets.length - 1, times, values, used);
      used += value.length;
      offsets.push(used);
    };
    const handle = await open(path, 'r');
    const buffer = new Uint8Array(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      parser.write(buffer.slice(0, bytesRead));
    }
    await handle.close();
    set = { count: offsets.length - 1, times: times.subarray(0, used), values: values.subarray(0, used), offsets: Uint32Array.from(offsets) };
  } else if (method === 'one-pass') {
    set = await readPcfJsonOnePass(path, 'float64', false);
  } else {
    set = await readPcfFile(path);
  }
  const seconds = (performance.now() - started) / 1000;
  const busiestThreadCpuSeconds = busiest();
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const dataBytes = set.times.byteLength + set.values.byteLength + set.offsets.byteLength;
  const peak = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(JSON.stringify({ seconds, cpuSeconds, busiestThreadCpuSeconds, count: set.count, dataBytes, peakRss: peak, baseRss: base }));
}

function measure(method, path) {
  try {
    const out = execFileSync(process.execPath, ['--max-old-space-size=16384', new URL(import.meta.url).pathname, '--child', method, path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return JSON.parse(out);
  } catch (err) {
    return { error: String(err.stderr ?? err.message).trim().split('\n').filter((l) => /Error/.test(l))[0] ?? 'failed' };
  }
}

async function main() {
  const { randomPcfs, writePcfNpz } = await import('../dist/index.js');
  const { writePcfsJson } = await import('../dist/cli/output.js');
  const sizes = (process.env.PXL_BENCH_INPUT_MB ?? '64,1024').split(',').map(Number);
  const repeats = Math.max(1, Number(process.env.PXL_BENCH_INPUT_REPEAT ?? 1));
  const dir = await mkdtemp(join(tmpdir(), 'pxl-bench-input-'));
  const report = { bench: 'input', date: new Date().toISOString(), node: process.version, cores: availableParallelism(), points: POINTS, repeats, results: [] };
  try {
    for (const [k, mb] of sizes.entries()) {
      const n = Math.round((mb * 2 ** 20) / JSON_BYTES_PER_PCF);
      const set = randomPcfs({ n, points: POINTS, seed: 1 });
      const json = join(dir, `in-${mb}.json`);
      const npz = join(dir, `in-${mb}.npz`);
      const jsonHandle = await open(json, 'w');
      await writePcfsJson(set, { write: async (chunk) => void (await jsonHandle.write(chunk)) });
      await jsonHandle.close();
      const handle = await open(npz, 'w');
      await writePcfNpz(set, async (chunk) => {
        await handle.write(chunk);
      });
      await handle.close();
      const jsonBytes = (await stat(json)).size;
      const npzBytes = (await stat(npz)).size;
      const only = process.env.PXL_BENCH_INPUT_METHODS?.split(',');
      const methods = (k === 0 ? ['whole-string', 'streamparser', 'one-pass', 'parts', 'npz'] : ['one-pass', 'parts', 'npz']).filter((m) => only === undefined || only.includes(m));
      const load = loadavg().map((l) => sig(l));
      const runs = new Map(methods.map((m) => [m, []]));
      for (let r = 0; r < repeats; r++) {
        for (const method of methods) runs.get(method).push(measure(method, method === 'npz' ? npz : json));
      }
      for (const method of methods) {
        const fileBytes = method === 'npz' ? npzBytes : jsonBytes;
        const ok = runs.get(method).filter((r) => r.error === undefined);
        if (ok.length === 0) {
          report.results.push({ method, pcfs: n, fileMB: sig(fileBytes / 2 ** 20), error: runs.get(method)[0].error });
          continue;
        }
        const seconds = median(ok.map((r) => r.seconds));
        const peak = median(ok.map((r) => r.peakRss));
        report.results.push({
          method,
          loadAverage: load,
          pcfs: ok[0].count,
          fileMB: sig(fileBytes / 2 ** 20),
          runs: ok.length,
          seconds: sig(seconds),
          secondsEach: ok.map((r) => sig(r.seconds)),
          cpuSeconds: sig(median(ok.map((r) => r.cpuSeconds))),
          cpuSecondsEach: ok.map((r) => sig(r.cpuSeconds)),
          busiestThreadCpuSeconds: sig(median(ok.map((r) => r.busiestThreadCpuSeconds))),
          fileMBPerSecond: sig(fileBytes / 2 ** 20 / seconds),
          dataMB: sig(ok[0].dataBytes / 2 ** 20),
          peakRssMB: sig(peak / 2 ** 20),
          memoryOverData: sig(median(ok.map((r) => (r.peakRss - r.baseRss) / r.dataBytes))),
        });
      }
      await rm(json);
      await rm(npz);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  printJson(report);
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4]);
else await main();
