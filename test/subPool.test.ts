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

  it('counts lent Subs as free and reclaims loans, oldest first, only when too few are truly free', () => {
    const pool = new SubPool(4);
    const reclaimed: string[] = [];
    const held = { a: pool.take(1), b: pool.take(2) };
    pool.lend({ count: 1, reclaim: () => (reclaimed.push('a'), pool.give(held.a)) });
    const withdrawB = pool.lend({ count: 2, reclaim: () => (reclaimed.push('b'), pool.give(held.b)) });
    expect(pool.free).toBe(4);
    expect(pool.take(1)).toEqual([3]);
    expect(reclaimed).toEqual([]);
    expect(pool.take(1)).toEqual([0]);
    expect(reclaimed).toEqual(['a']);
    expect(withdrawB()).toBe(true);
    expect(withdrawB()).toBe(false);
    expect(pool.free).toBe(0);
    expect(() => pool.take(1)).toThrow(new NoSubAvailableError('cannot take 1 Sub: 0 of 4 are free; destroy a Job or free Subs with job.subFree() first'));
  });

  it('answers false to the withdrawal of a loan that was reclaimed', () => {
    const pool = new SubPool(1);
    const held = pool.take(1);
    const withdraw = pool.lend({ count: 1, reclaim: () => pool.give(held) });
    expect(pool.take(1)).toEqual([0]);
    expect(withdraw()).toBe(false);
  });

  it('wakes every caller of returned() when Subs are given back, and not before', async () => {
    const pool = new SubPool(2);
    const held = pool.take(2);
    let woken = 0;
    const waits = [pool.returned().then(() => woken++), pool.returned().then(() => woken++)];
    await Promise.resolve();
    expect(woken).toBe(0);
    pool.give([]);
    await Promise.resolve();
    expect(woken).toBe(0);
    pool.give(held);
    await Promise.all(waits);
    expect(woken).toBe(2);
  });
});
