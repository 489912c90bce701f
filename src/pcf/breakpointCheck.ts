import { PcfError } from '../core/errors.js';

/** The way out of a float32 refusal, on the command line and in the API. */
export const AS_FLOAT64 = "read it as float64 (--dtype float64; dtype: 'float64')";

/**
 * The checks every breakpoint of a PCF passes, whether it arrives as a `[t, v]` pair (pcf.ts) or as
 * two columns from the JSON stream reader (flatBreakpoints.ts), so both give the same message.
 * `t` has had -0 turned into 0; `f32` when the PCF is stored as float32.
 *
 * @throws PcfError naming PCF `index` and breakpoint `k`.
 */
export function checkBreakpoint(index: number, k: number, t: number, v: number, f32: boolean): void {
  if (!Number.isFinite(t)) throw new PcfError(index, `breakpoint ${k} has a non-finite time (${t})`);
  if (!Number.isFinite(v)) throw new PcfError(index, `breakpoint ${k} has a non-finite value (${v})`);
  if (t < 0) throw new PcfError(index, `breakpoint ${k} has a negative time (${t})`);
  if (f32) {
    if (!Number.isFinite(Math.fround(t))) throw new PcfError(index, `breakpoint ${k} has time ${t}, which overflows float32; ${AS_FLOAT64}`);
    if (!Number.isFinite(Math.fround(v))) throw new PcfError(index, `breakpoint ${k} has value ${v}, which overflows float32; ${AS_FLOAT64}`);
  }
}

/**
 * The words of a refusal of breakpoints `a` and `b` (input order) with one time `time`: where the
 * input's times `ta` and `tb` differ and only their float32 roundings meet, it says so and how to
 * keep them apart.
 */
export function sameTimeMessage(a: number, b: number, time: number, ta: number, tb: number, float32: boolean): string {
  const words = `breakpoints ${Math.min(a, b)} and ${Math.max(a, b)} have the same time (${time})`;
  if (!float32 || ta === tb) return words;
  return `${words} in float32, where the input's times ${Math.min(ta, tb)} and ${Math.max(ta, tb)} differ; ${AS_FLOAT64} to keep them apart`;
}
