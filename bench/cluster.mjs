// pdist across machines, measured on one: the same run by two one-core `pxl worker` processes
// through a local nats-server (JetStream) against one local two-core run, in this one script.
// Prints JSON: the throughput ratio (cluster / local; the goal on 2-vCPU machines is >= 0.85), the
// overhead per block, and the time from a worker's SIGKILL to its block starting on the other.
// Beside the wall-time ratio, two ratios of CPU seconds: local CPU over the cluster's (every
// process: what the ratio tends to when all of them share two otherwise idle cores) and local CPU
// over twice the busier worker's (workers on machines of their own).
// Local and cluster runs alternate (--reps times each) because the machine is shared, and every
// figure is the median of the runs; the CPU seconds of every process (this one, the workers, the
// server) show where time goes whatever the load, and the load average is printed beside them.
//
//   npm run build && node bench/cluster.mjs            # N = 6000
//   node bench/cluster.mjs --n 10000 --side 1024 --points 100 --reps 3
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => {
  const k = process.argv.indexOf(name);
  return k < 0 ? fallback : Number(process.argv[k + 1]);
};
const N = arg('--n', 6000);
const SIDE = arg('--side', 512);
const POINTS = arg('--points', 20);
const REPS = arg('--reps', 5);
/** The server's max_payload (its default is 1 MiB): a result larger than it goes as several messages. */
const MAX_PAYLOAD = arg('--max-payload', 0);
const BIN = fileURLToPath(new URL('../bin/pxl.js', import.meta.url));
const { pdist, randomPcfs, createContext } = await import('../dist/index.js');

const dir = mkdtempSync(join(tmpdir(), 'pxl-bench-cluster-'));
const children = [];
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const url = `nats://127.0.0.1:${port}`;

function start(cmd, args) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  const lines = [];
  let waiters = [];
  let rest = '';
  child.stderr.on('data', (chunk) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop();
    for (const line of parts) lines.push({ line, at: performance.now() });
    for (const w of waiters.splice(0)) w();
  });
  const line = async (re, after = 0) => {
    for (;;) {
      const found = lines.find((l) => l.at >= after && re.test(l.line));
      if (found) return found;
      await new Promise((r) => waiters.push(r));
    }
  };
  return { child, line };
}

/** CPU seconds (user + system) of process `pid` so far, from /proc (Linux). */
function cpuOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
/** CPU seconds of each thread of process `pid` so far, by thread id (Linux). */
function threadCpuOf(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(tid, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
/** A worker's CPU seconds between two snapshots: its busiest thread (the core computing) and the rest. */
function workerSplit(before, after) {
  const deltas = [...after].map(([tid, s]) => s - (before.get(tid) ?? 0));
  const compute = Math.max(0, ...deltas);
  return { compute, rest: deltas.reduce((a, b) => a + b, 0) - compute };
}
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

try {
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, MAX_PAYLOAD > 0 ? `max_payload: ${MAX_PAYLOAD}\n` : '');
  const server = start('nats-server', ['-c', conf, '-js', '-sd', join(dir, 'store'), '-a', '127.0.0.1', '-p', String(port)]);
  await new Promise((r) => setTimeout(r, 500));
  const warm = randomPcfs({ n: 300, points: POINTS, seed: 2 });

  // Baseline: one process, a Context of two one-core Subs (what two one-core workers have together).
  const ctx = await createContext({ topology: { subs: 2, clustersPerSub: 1, coresPerCluster: 1 } });
  await pdist(warm, { context: ctx, out: join(dir, 'warm.npy') });
  const workers = [start(process.execPath, [BIN, 'worker', '--nats', url, '--cores', '1', '--id', 'a', '--verbose']), start(process.execPath, [BIN, 'worker', '--nats', url, '--cores', '1', '--id', 'b', '--verbose'])];
  await Promise.all(workers.map((w) => w.line(/connected to/)));
  await pdist(warm, { out: join(dir, 'warm2.npy'), cluster: { nats: url } });

  // Alternating runs, local first; every figure is a median over the runs (wall times swing with
  // the machine's load, CPU seconds much less).
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const runs = [];
  let local;
  let remote;
  for (let rep = 0; rep < REPS; rep++) {
    // A fresh input each time, as for a user's new run: the cluster run puts it into the Object
    // Store and each worker gets it, within the time measured.
    const X = randomPcfs({ n: N, points: POINTS, seed: 1 + rep });
    const load = loadavg()[0];
    let cpu0 = ownCpu();
    let t = performance.now();
    local = await pdist(X, { context: ctx, out: join(dir, 'local.npy'), minBlockSide: SIDE });
    const localS = (performance.now() - t) / 1000;
    const localCpu = ownCpu() - cpu0;
    const before = [ownCpu(), ...workers.map((w) => cpuOf(w.child.pid)), cpuOf(server.child.pid)];
    const threadsBefore = workers.map((w) => threadCpuOf(w.child.pid));
    t = performance.now();
    remote = await pdist(X, { out: join(dir, 'cluster.npy'), minBlockSide: SIDE, cluster: { nats: url } });
    const clusterS = (performance.now() - t) / 1000;
    const after = [ownCpu(), ...workers.map((w) => cpuOf(w.child.pid)), cpuOf(server.child.pid)];
    const d = after.map((v, k) => v - before[k]);
    const split = workers.map((w, k) => workerSplit(threadsBefore[k], threadCpuOf(w.child.pid)));
    runs.push({
      load, localS, localCpu, clusterS, ratio: localS / clusterS,
      coordinator: d[0], workerA: d[1], workerB: d[2], natsServer: d[3], clusterCpu: d[0] + d[1] + d[2] + d[3],
      workersComputing: split[0].compute + split[1].compute, workersOtherThreads: split[0].rest + split[1].rest,
      // Bounds from CPU seconds, which the load hardly changes: everything on one 2-vCPU machine
      // (the cluster's processes share the two cores the local run has), and workers on machines
      // of their own (each one core; the coordinator and server elsewhere).
      oneMachineCpuRatio: localCpu / (d[0] + d[1] + d[2] + d[3]),
      ownMachinesCpuRatio: localCpu / (2 * Math.max(d[1], d[2])),
    });
  }
  const med = (key, digits = 2) => +median(runs.map((r) => r[key])).toFixed(digits);
  await ctx.destroy();

  // Death to redelivery: kill the first worker to start a block; time until the other starts that
  // block. Either may be first: with few blocks (a small --n) the other may never start one itself.
  const ACK_WAIT = 2000;
  const before = performance.now();
  const running = pdist(randomPcfs({ n: N, points: POINTS, seed: 1 }), { out: join(dir, 'killed.npy'), p: 2, minBlockSide: SIDE, cluster: { nats: url, ackWait: ACK_WAIT } });
  const started = await Promise.race(workers.map((w, k) => w.line(/block \d+ of run [0-9a-f]+: started/, before).then((l) => ({ ...l, k }))));
  const block = /block (\d+) of run ([0-9a-f]+)/.exec(started.line);
  workers[started.k].child.kill('SIGKILL');
  const killedAt = performance.now();
  const again = await workers[1 - started.k].line(new RegExp(`block ${block[1]} of run ${block[2]}: started`), before);
  await running;

  const pairs = (N * (N - 1)) / 2;
  const localS = med('localS', 3);
  const clusterS = med('clusterS', 3);
  console.log(JSON.stringify({
    n: N,
    points: POINTS,
    blockSide: SIDE,
    maxPayload: MAX_PAYLOAD || 'default (1 MiB)',
    blocks: remote.blocks,
    reps: REPS,
    loadAverage1m: { atEachRep: runs.map((r) => +r.load.toFixed(2)), atEnd: +loadavg()[0].toFixed(2) },
    local2Cores: { seconds: localS, pairsPerSecond: Math.round(pairs / localS), cpuSeconds: med('localCpu') },
    cluster2Workers1Core: {
      seconds: clusterS,
      pairsPerSecond: Math.round(pairs / clusterS),
      cpuSeconds: {
        total: med('clusterCpu'), coordinator: med('coordinator'), workerA: med('workerA'), workerB: med('workerB'), natsServer: med('natsServer'),
        workersComputing: med('workersComputing'), workersOtherThreads: med('workersOtherThreads'),
      },
    },
    throughputRatio: med('ratio', 3),
    ratioOfEachRep: runs.map((r) => +r.ratio.toFixed(3)),
    cpuRatioOneMachine: med('oneMachineCpuRatio', 3),
    cpuRatioOwnMachines: med('ownMachinesCpuRatio', 3),
    overheadPerBlockMs: +(((clusterS - localS) * 1000) / remote.blocks).toFixed(2),
    cpuOverheadPerBlockMs: +(median(runs.map((r) => r.clusterCpu - r.localCpu)) * 1000 / remote.blocks).toFixed(2),
    ackWaitMs: ACK_WAIT,
    deathToRedeliveryMs: Math.round(again.at - killedAt),
    sameBlocks: local.blocks === remote.blocks,
  }, null, 2));
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
