// Work-group kernels for examples/work-groups/main.mjs (docs/work-groups.md). On CPU cores each
// work-item is a generator: `yield mu.barrier()` is the point every item of its group reaches
// before any goes on, and `local` holds the group's shared arrays.
import { defineGroupKernel, mu } from 'pxl/mu';

/** sums[g] = the sum of src over work-group g, by tree reduction in local memory. */
export const block_sum = defineGroupKernel({
  local: { partial: { dtype: 'float64', length: (size) => size[0] } },
  run: function* (local, src, sums) {
    const l = mu.getLocalId(0);
    local.partial[l] = src.data[mu.getGlobalId(0)];
    yield mu.barrier();
    for (let s = mu.getLocalSize(0) >> 1; s > 0; s >>= 1) {
      if (l < s) local.partial[l] += local.partial[l + s];
      yield mu.barrier();
    }
    if (l === 0) sums.data[mu.getGroupId(0)] = local.partial[0];
  },
});

/**
 * Rows of a [rows, width] image, each smoothed with a 3-point average. A group copies its rows
 * plus one halo row above and below into local memory with one strided DMA read, waits for it,
 * then every item writes its point.
 */
export const smooth_rows = defineGroupKernel({
  local: { tile: { dtype: 'float64', length: (size) => size[0] * (size[1] + 2) } },
  run: function* (local, src, dst) {
    const w = mu.getLocalSize(0), h = mu.getLocalSize(1);
    const width = src.shape[1], rows = src.shape[0];
    const x = mu.getLocalId(0), y = mu.getLocalId(1);
    const x0 = mu.getGroupId(0) * w, y0 = mu.getGroupId(1) * h;
    // Halo rows clamp at the image's edges: read h + 2 lines starting one above, within bounds.
    const first = Math.max(0, y0 - 1), last = Math.min(rows - 1, y0 + h);
    const lines = last - first + 1;
    yield mu.dmaWait(mu.dmaRead(local.tile, (first - (y0 - 1)) * w, src.data, first * width + x0, [w, lines], { src: [width] }));
    const t = local.tile, at = (y + 1) * w + x;
    const up = y0 + y === 0 ? t[at] : t[at - w];
    const down = y0 + y === rows - 1 ? t[at] : t[at + w];
    dst.data[(y0 + y) * width + x0 + x] = (up + t[at] + down) / 3;
  },
});
