/**
 * The two PCFs of the hovered entry drawn as step functions: value v_k on [t_k, t_{k+1}), the last
 * value continuing to the right edge (PCF semantics: it extends to +infinity).
 */

/** The flattened PCFs of a PcfSet: PCF k owns breakpoints offsets[k] .. offsets[k+1] - 1. */
export interface PcfSource {
  readonly times: ArrayLike<number>;
  readonly values: ArrayLike<number>;
  readonly offsets: ArrayLike<number>;
}

/** One PCF to draw and its colour. */
export interface PlottedPcf {
  readonly index: number;
  readonly color: string;
}

const MARGIN = { left: 44, right: 10, top: 10, bottom: 22 };

/** Draws `pcfs` of `set` into `canvas` (sized to its CSS box at the device's pixel ratio). */
export function plotPcfs(canvas: HTMLCanvasElement, set: PcfSource, pcfs: readonly PlottedPcf[]): void {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth;
  const height = canvas.clientHeight;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const g = canvas.getContext('2d');
  if (g === null) return;
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, width, height);

  // The x range ends a little after the last breakpoint, so the final (infinite) step shows.
  let tEnd = 0;
  let vMin = 0;
  let vMax = 0;
  for (const { index } of pcfs) {
    const from = set.offsets[index]!;
    const to = set.offsets[index + 1]!;
    tEnd = Math.max(tEnd, set.times[to - 1]!);
    for (let k = from; k < to; k++) {
      vMin = Math.min(vMin, set.values[k]!);
      vMax = Math.max(vMax, set.values[k]!);
    }
  }
  const xMax = tEnd > 0 ? tEnd * 1.1 : 1;
  if (vMax === vMin) vMax = vMin + 1;
  const pad = (vMax - vMin) * 0.05;
  const y0 = vMin - pad;
  const y1 = vMax + pad;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const x = (t: number): number => MARGIN.left + (t / xMax) * plotW;
  const y = (v: number): number => MARGIN.top + (1 - (v - y0) / (y1 - y0)) * plotH;

  drawAxes(g, { x, y, xMax, y0, y1, plotW, plotH });
  g.lineWidth = 1.5;
  for (const { index, color } of pcfs) {
    const from = set.offsets[index]!;
    const to = set.offsets[index + 1]!;
    g.strokeStyle = color;
    g.beginPath();
    g.moveTo(x(set.times[from]!), y(set.values[from]!));
    for (let k = from; k < to; k++) {
      const end = k + 1 < to ? set.times[k + 1]! : xMax;
      g.lineTo(x(end), y(set.values[k]!));
      if (k + 1 < to) g.lineTo(x(end), y(set.values[k + 1]!));
    }
    g.stroke();
  }
}

interface Frame {
  x(t: number): number;
  y(v: number): number;
  xMax: number;
  y0: number;
  y1: number;
  plotW: number;
  plotH: number;
}

function drawAxes(g: CanvasRenderingContext2D, f: Frame): void {
  g.strokeStyle = '#999';
  g.fillStyle = '#555';
  g.lineWidth = 1;
  g.font = '11px system-ui, sans-serif';
  g.beginPath();
  g.moveTo(MARGIN.left, MARGIN.top);
  g.lineTo(MARGIN.left, MARGIN.top + f.plotH);
  g.lineTo(MARGIN.left + f.plotW, MARGIN.top + f.plotH);
  g.stroke();
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (const t of niceTicks(0, f.xMax, 5)) g.fillText(formatTick(t), f.x(t), MARGIN.top + f.plotH + 4);
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (const v of niceTicks(f.y0, f.y1, 4)) g.fillText(formatTick(v), MARGIN.left - 4, f.y(v));
}

/** Round tick values (1, 2 or 5 times a power of ten apart) inside [from, to], about `count` of them. */
function niceTicks(from: number, to: number, count: number): number[] {
  const raw = (to - from) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let k = Math.ceil(from / step); k * step <= to; k++) ticks.push(k * step);
  return ticks;
}

function formatTick(v: number): string {
  return Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(0) : String(Number(v.toPrecision(3)));
}
