import { describe, expect, it } from 'vitest';
import { OptionError } from '../src/core/errors.js';
import { ACCESS_MODES, accessOf, formatAccess, isConsumer, isProducer } from '../src/graph/accessMode.js';

describe('access modes', () => {
  it('lists read, write and read_write', () => {
    expect(ACCESS_MODES).toEqual(['read', 'write', 'read_write']);
  });

  it('classifies producers and consumers, with noInit dropping the need for old contents', () => {
    const table = [
      accessOf('read'),
      accessOf('write'),
      accessOf('write', { noInit: true }),
      accessOf('read_write'),
      accessOf('read_write', { noInit: true }),
    ].map((a) => [formatAccess(a), isProducer(a), isConsumer(a)]);
    expect(table).toEqual([
      ['read', false, true],
      ['write', true, true],
      ['write (no_init)', true, false],
      ['read_write', true, true],
      ['read_write (no_init)', true, false],
    ]);
  });

  it('makes frozen values', () => {
    const a = accessOf('write', { noInit: true });
    expect(a).toEqual({ mode: 'write', noInit: true });
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('rejects noInit on a read and unknown modes', () => {
    // @ts-expect-error a read cannot promise noInit
    expect(() => accessOf('read', { noInit: true })).toThrow(
      new OptionError("noInit applies to 'write' and 'read_write' accesses only; a 'read' access needs the buffer's contents"),
    );
    // @ts-expect-error not an access mode
    expect(() => accessOf('discard_write')).toThrow(new OptionError("access mode must be one of 'read', 'write', 'read_write', got 'discard_write'"));
    expect(() => accessOf('write', { noInit: 1 as never })).toThrow(new OptionError('noInit must be true or false, got 1'));
  });
});
