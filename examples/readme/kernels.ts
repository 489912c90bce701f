// The kernel module of the README's first example.
import { getTaskIdx, type NDView } from 'pxl/mu';

export function scale_rows(rows: NDView<Float64Array>, factor: number): void {
  // `rows` is this task's own row of the NDArray passed to execute().
  for (let i = 0; i < rows.size; i++) rows.data[rows.offset + i]! *= factor * (getTaskIdx() + 1);
}
