import { describe, expect, it } from 'vitest';
import { expectAllClose } from './helpers/closeTo.js';

describe('expectAllClose', () => {
  it('passes entries within atol + rtol * max(|a|, |e|), and equal infinities', () => {
    expectAllClose([1, 2, Infinity], [1 + 1e-13, 2, Infinity], { rtol: 1e-12 });
    expectAllClose(new Float32Array([0.1]), [0.1], { rtol: 1e-7 });
    expectAllClose([[1, 2], [3]], [[1, 2], [3.001]], { atol: 0.01 });
  });

  it('fails on NaN in either array, naming the first bad index and counting the rest', () => {
    expect(() => expectAllClose([1, NaN, NaN], [1, 2, 3], { rtol: 1 })).toThrow(
      'values[1]: got NaN, expected 2 (difference NaN, allowed NaN with rtol 1, atol 0); 2 of 3 entries differ',
    );
    expect(() => expectAllClose([NaN], [NaN])).toThrow('values[0]: got NaN, expected NaN');
    expect(() => expectAllClose([1], [NaN], { rtol: 1 })).toThrow('values[0]: got 1, expected NaN');
    expectAllClose([NaN, 1], [NaN, 1], { nanEqual: true });
  });

  it('fails on a length or shape mismatch before comparing', () => {
    expect(() => expectAllClose([1, 2], [1, 2, 3], { what: 'row 0' })).toThrow('row 0: shape [2] differs from the expected [3]');
    expect(() => expectAllClose([[1, 2], [3]], [[1], [2, 3]])).toThrow(
      'values: shape [2, 1] (row lengths) differs from the expected [1, 2] (row lengths)',
    );
    expect(() => expectAllClose([], [0])).toThrow('values: shape [0] differs from the expected [1]');
  });

  it('names a matrix entry by row and column, and reports the bound it broke', () => {
    expect(() => expectAllClose([[1, 2], [3, 4]], [[1, 2], [3, 4.5]], { atol: 0.25 })).toThrow(
      'values[1][1]: got 4, expected 4.5 (difference 0.5, allowed 0.25 with rtol 0, atol 0.25); 1 of 4 entries differ',
    );
    expect(() => expectAllClose([-Infinity], [Infinity], { rtol: 1 })).toThrow('values[0]: got -Infinity, expected Infinity');
  });
});
