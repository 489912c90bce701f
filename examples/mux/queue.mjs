// Command buffers and the in-order CommandQueue (docs/mux.md): y = a·x + y three times over, first
// as one recorded command buffer dispatched after a semaphore, then through a CommandQueue whose
// blocking read submits the whole chain as one batch.
//   npm run build && node examples/mux/queue.mjs
import { CommandBuffer, CommandQueue, createContext, dispatch, Fence, NDArray, Semaphore } from '../../dist/index.js';

const n = 1 << 16;
const chunk = 1 << 12; // elements per task of the triad kernel
const ctx = await createContext();
try {
  const job = ctx.createJob();
  job.load(await ctx.createModule(new URL('../kernels.mjs', import.meta.url)));
  const xPtr = ctx.memAlloc(n * 8);
  const yPtr = ctx.memAlloc(n * 8);
  const x = new NDArray(xPtr, 'float64', [n]);
  const y = new NDArray(yPtr, 'float64', [n]);
  const triad = { global: [n / chunk] };
  const out = new Float64Array(n);

  // 1. Explicit command buffers: `init` fills x and y; `work` waits on init's semaphore, runs three
  //    dependent triads and reads y back; the fence says when it is done.
  const init = new CommandBuffer(ctx).fill(xPtr, 0, n * 8, Float64Array.of(1)).fill(yPtr, 0, n * 8, Float64Array.of(2)).finalize();
  const work = new CommandBuffer(ctx, job)
    .launch('triad', triad, 3, x, y, chunk)
    .launch('triad', triad, 3, x, y, chunk)
    .launch('triad', triad, 3, x, y, chunk)
    .read(yPtr, 0, out)
    .finalize();
  const ready = new Semaphore();
  const done = new Fence();
  dispatch(work, { wait: [ready], fence: done }); // waits for init, dispatched next
  dispatch(init, { signal: [ready] });
  await done.wait();
  console.log(`command buffers: y[0] = ${out[0]}, y[${n - 1}] = ${out[n - 1]} (expected 11)`);

  // 2. The same chain through an in-order queue: nothing is submitted until the blocking read.
  const queue = new CommandQueue(ctx, job);
  queue.enqueueWrite(xPtr, 0, new Float64Array(n).fill(1)).enqueueFill(yPtr, 0, n * 8, Float64Array.of(2));
  for (let i = 0; i < 3; i++) queue.enqueueLaunch('triad', triad, 3, x, y, chunk);
  console.log(`queued ${queue.queued} commands, ${queue.inFlight} buffers in flight`);
  await queue.enqueueRead(yPtr, 0, out, { blocking: true });
  console.log(`command queue: y[0] = ${out[0]}, y[${n - 1}] = ${out[n - 1]} (expected 11)`);

  // 3. A failure stops the queue: later commands do not run, finish() rejects, enqueues throw.
  queue.enqueueCallback(() => {
    throw new Error('host step failed');
  });
  queue.enqueueFill(yPtr, 0, n * 8, Float64Array.of(0));
  await queue.finish().catch((e) => console.log(`finish() rejected: ${e.name}: ${e.message}`));
  console.log(`y[0] = ${ctx.hostView(yPtr, 'float64')[0]} (the fill after the failure did not run)`);
  queue.reset(); // usable again
} finally {
  await ctx.destroy();
}
