// A dense matrix multiply on the task graph, checked against a plain single-thread loop:
// `npx tsx examples/graph/matmul.ts`.
import { access, createContext } from 'pxl';

const [n, k, m] = [128, 96, 112];
let seed = 1;
const random = (): number => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
const a = Float32Array.from({ length: n * k }, random);
const b = Float32Array.from({ length: k * m }, random);

const ctx = await createContext();
const q = ctx.createQueue();
q.load(await ctx.createModule(new URL('./kernels.ts', import.meta.url)));
const A = q.buffer(Float32Array, [n, k], { init: a });
const B = q.buffer(Float32Array, [k, m], { init: b });
const C = q.buffer(Float32Array, [n, m]);
q.submit((cg) => {
  // A chunk of C's index space needs whole rows of A and whole columns of B.
  const rowsOfA = cg.read(A, access.slice(1));
  const colsOfB = cg.read(B, access.slice(0));
  const blockOfC = cg.write(C, access.oneToOne(), { noInit: true });
  cg.parallelFor([n, m], 'matmul', rowsOfA, colsOfB, blockOfC);
});
const c = await q.fence(C);

let maxDiff = 0;
for (let i = 0; i < n; i++) {
  for (let j = 0; j < m; j++) {
    let s = 0;
    for (let x = 0; x < k; x++) s += a[i * k + x]! * b[x * m + j]!;
    maxDiff = Math.max(maxDiff, Math.abs(c[i * m + j]! - Math.fround(s)));
  }
}
console.log(`matmul: [${n}×${k}] · [${k}×${m}] on ${q.chunkCount} chunks; max |difference| from the single-thread loop: ${maxDiff}`);
await q.destroy();
await ctx.destroy();
if (maxDiff !== 0) process.exitCode = 1;
