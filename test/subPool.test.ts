import { describe, expect, it } from 'vitest';
import { SubPool } from '../src/pxl/subPool.js';
import { NoSubAvailableError } from '../src/index.js';

describe('SubPool', () => {
  it('hands out the lowest free Subs and takes them back in any order', () => {
    const pool = new SubPool(4);
    expect(pool.take(2)).toEqual([0, 1]);
    expect(pool.take(1)).toEqual([2]);
    pool.give([1, 0]);
    expect(pool.free).toBe(3);
    expect(pool.take(3)).toEqual([0, 1, 3]);
    expect(pool.free).toBe(0);
  });

  it('refuses more Subs than are free, and none, saying how many are free', () => {
    const pool = new SubPool(2);
    pool.take(1);
    expect(() => pool.take(2)).toThrow(new NoSubAvailableError('cannot take 2 Subs: 1 of 2 are free; destroy a Job or free Subs with job.subFree() first'));
    expect(() => pool.take(0)).toThrow(NoSubAvailableError);
    expect(pool.free).toBe(1);
  });
});
