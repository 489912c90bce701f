/**
 * The heatmap's colours: a perceptually ordered scale from dark blue-violet through teal to
 * yellow (close to matplotlib's viridis, sampled at five points and interpolated linearly), so
 * that small distances read dark and large ones bright, also in greyscale. Pure.
 */

/** RGB stops at 0, 0.25, 0.5, 0.75, 1. */
const STOPS: readonly (readonly [number, number, number])[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

/**
 * The colour of `t` in [0, 1] as [r, g, b] bytes; t outside is clamped, NaN is mid grey (a
 * missing value should stand out, not pass for an extreme).
 */
export function colorAt(t: number): [number, number, number] {
  if (Number.isNaN(t)) return [128, 128, 128];
  const x = Math.min(1, Math.max(0, t)) * (STOPS.length - 1);
  const k = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - k;
  const a = STOPS[k]!;
  const b = STOPS[k + 1]!;
  return [Math.round(a[0] + f * (b[0] - a[0])), Math.round(a[1] + f * (b[1] - a[1])), Math.round(a[2] + f * (b[2] - a[2]))];
}

/** A CSS linear-gradient of the scale, left (0) to right (1), for the legend. */
export function cssGradient(): string {
  return `linear-gradient(to right, ${STOPS.map(([r, g, b], k) => `rgb(${r} ${g} ${b}) ${(100 * k) / (STOPS.length - 1)}%`).join(', ')})`;
}
