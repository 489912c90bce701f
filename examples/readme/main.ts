// The README's first example, as a user runs it: `npx tsx examples/readme/main.ts`.
import { createContext, NDArray } from 'pxl';

const ctx = await createContext();                       // CPU backend: one MU core per CPU
const mod = await ctx.createModule(new URL('./kernels.ts', import.meta.url));
const job = ctx.createJob();                             // all remaining Subs
job.load(mod);

const rows = 1000, cols = 64;
const ptr = ctx.memAlloc(rows * cols * 8);               // device memory, shared with the cores
ctx.hostView(ptr, 'float64').fill(1);                    // zero-copy host view

const map = job.buildMap('scale_rows', rows);            // taskCount = rows
await map.execute(new NDArray(ptr, 'float64', [rows, cols]), 2);
await map.synchronize();
console.log(ctx.hostView(ptr, 'float64')[cols]);         // 4: row 1 was scaled by 2 * 2
await ctx.destroy();
