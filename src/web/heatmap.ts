/**
 * The result as a heatmap on a canvas: one pixel per cell of a {@link HeatmapGrid} (CSS scales it
 * up without smoothing), and the inverse mapping from a pointer position to the entry (i, j)
 * under it, exact to the item even when cells average many entries.
 */
import { colorAt } from './colormap.js';
import { heatmapGrid, type HeatmapGrid } from './heatmapGrid.js';
import type { MatrixView } from './matrixView.js';

/** An entry under the pointer: item indices of the input and the value there. */
export interface HeatmapEntry {
  readonly i: number;
  readonly j: number;
  readonly value: number;
}

/**
 * Draws results into one canvas and maps pointer positions back to entries. The canvas's CSS
 * size is set by the page; its pixel size is the grid's.
 */
export class Heatmap {
  readonly #canvas: HTMLCanvasElement;
  #view: MatrixView | undefined;
  #order: ArrayLike<number> = [];
  #grid: HeatmapGrid | undefined;

  constructor(canvas: HTMLCanvasElement) {
    this.#canvas = canvas;
  }

  /** The drawn grid's value range, or undefined before the first draw. */
  get range(): { min: number; max: number } | undefined {
    return this.#grid === undefined ? undefined : { min: this.#grid.min, max: this.#grid.max };
  }

  /** Draws `view` with rows and columns in `order`, at most `side` cells per side. */
  draw(view: MatrixView, order: ArrayLike<number>, side: number): void {
    const grid = heatmapGrid(view, order, side);
    this.#view = view;
    this.#order = order;
    this.#grid = grid;
    const canvas = this.#canvas;
    canvas.width = grid.size;
    canvas.height = grid.size;
    const g = canvas.getContext('2d');
    if (g === null || grid.size === 0) return;
    const image = g.createImageData(grid.size, grid.size);
    const span = grid.max - grid.min;
    for (let k = 0; k < grid.cells.length; k++) {
      const [r, gr, b] = colorAt(span > 0 ? (grid.cells[k]! - grid.min) / span : 0.5);
      image.data[4 * k] = r;
      image.data[4 * k + 1] = gr;
      image.data[4 * k + 2] = b;
      image.data[4 * k + 3] = 255;
    }
    g.putImageData(image, 0, 0);
  }

  /** Forgets the drawn result and clears the canvas. */
  clear(): void {
    this.#view = undefined;
    this.#grid = undefined;
    this.#order = [];
    this.#canvas.width = 0;
    this.#canvas.height = 0;
  }

  /** The entry under the client coordinates, or undefined outside the drawn matrix. */
  entryAt(clientX: number, clientY: number): HeatmapEntry | undefined {
    const view = this.#view;
    if (view === undefined || view.n === 0) return undefined;
    const box = this.#canvas.getBoundingClientRect();
    const fx = (clientX - box.left) / box.width;
    const fy = (clientY - box.top) / box.height;
    if (!(fx >= 0 && fx < 1 && fy >= 0 && fy < 1)) return undefined;
    const i = this.#order[Math.floor(fy * view.n)]!;
    const j = this.#order[Math.floor(fx * view.n)]!;
    return { i, j, value: view.value(i, j) };
  }
}
