import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { box, type Box } from '../src/core/box.js';
import { OptionError } from '../src/core/errors.js';
import { range } from '../src/core/range.js';
import { id } from '../src/core/id.js';
import { area, contains, emptyRegion, intersection, isEmpty, regionOf, union, type Region } from '../src/core/region.js';
import { CoherenceTable, formatCopy, HOST_MEMORY, memorySpace, type MemorySpaceId } from '../src/graph/coherence.js';

// Two simulated memory spaces besides the host: the bookkeeping the GPU backend and remote nodes use.
const host = HOST_MEMORY.id;
const gpu = memorySpace(1, 'gpu', 'GPU 0').id;
const node = memorySpace(2, 'remote', 'node 1').id;
const rows = (lo: number, hi: number): Region<2> => regionOf(box([lo, 0], [hi, 8]));

describe('memory spaces', () => {
  it('has host shared memory as space 0 and validates new spaces', () => {
    expect(HOST_MEMORY).toEqual({ id: 0, kind: 'host', name: 'host shared memory' });
    expect(() => memorySpace(-1, 'gpu', 'x')).toThrow(new OptionError('memory space id must be an integer in [0, 9007199254740991], got -1'));
    expect(() => memorySpace(3, 'disk' as never, 'x')).toThrow(OptionError);
    expect(() => memorySpace(3, 'gpu', '')).toThrow(new OptionError('a memory space needs a non-empty name'));
  });
});

describe('CoherenceTable', () => {
  it('needs no copies while everything runs in the space that wrote it', () => {
    const t = new CoherenceTable(range([8, 8]), host);
    expect(t.copiesFor(host, rows(0, 8))).toEqual([]);
    t.written(host, rows(2, 4));
    expect(t.copiesFor(host, rows(0, 8))).toEqual([]);
  });

  it('copies exactly the part another space wrote, and nothing once it was copied', () => {
    const t = new CoherenceTable(range([8, 8]), host);
    t.written(gpu, rows(4, 8));
    const copies = t.copiesFor(host, rows(2, 6));
    expect(copies).toEqual([{ from: gpu, to: host, region: rows(4, 6) }]);
    expect(copies.map(formatCopy)).toEqual(['space 1 → space 0 {[(4,0),(6,8))}']);
    t.applyCopies(copies);
    expect(t.copiesFor(host, rows(2, 6))).toEqual([]);
    expect(t.copiesFor(host, rows(0, 8))).toEqual([{ from: gpu, to: host, region: rows(6, 8) }]);
    // Both spaces hold rows 4-6 now; the GPU needs nothing back.
    expect(t.holders(rows(4, 6))).toEqual([{ region: rows(4, 6), value: [host, gpu] }]);
    expect(t.copiesFor(gpu, rows(4, 8))).toEqual([]);
  });

  it('makes a write the only newest copy, so the other holders need it again', () => {
    const t = new CoherenceTable(range([8, 8]), host);
    t.applyCopies(t.copiesFor(gpu, rows(0, 8)));
    expect(t.copiesFor(gpu, rows(0, 8))).toEqual([]);
    t.written(host, rows(0, 1));
    expect(t.copiesFor(gpu, rows(0, 8))).toEqual([{ from: host, to: gpu, region: rows(0, 1) }]);
  });

  it('copies nothing for points never written', () => {
    const t = new CoherenceTable(range([8, 8]));
    expect(t.unwritten(rows(0, 8))).toEqual(rows(0, 8));
    expect(t.copiesFor(gpu, rows(0, 8))).toEqual([]);
    t.written(host, rows(0, 2));
    expect(t.unwritten(rows(0, 8))).toEqual(rows(2, 8));
    expect(t.copiesFor(gpu, rows(0, 8))).toEqual([{ from: host, to: gpu, region: rows(0, 2) }]);
    t.applyCopies([{ from: host, to: gpu, region: rows(0, 8) }]);
    expect(t.unwritten(rows(0, 8))).toEqual(rows(2, 8));
  });

  it('gathers a region from several sources with one copy per source, in source order', () => {
    const t = new CoherenceTable(range([8, 8]));
    t.written(node, rows(0, 2));
    t.written(gpu, rows(2, 3));
    t.written(node, rows(5, 8));
    expect(t.copiesFor(host, rows(0, 8))).toEqual([
      { from: gpu, to: host, region: rows(2, 3) },
      { from: node, to: host, region: union(rows(0, 2), rows(5, 8)) },
    ]);
  });

  it('plans copies that are exact: disjoint, from a holder, covering what the target lacks', () => {
    const spaces = [host, gpu, node];
    const N = 6;
    const arbBox = fc
      .tuple(fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N }), fc.integer({ min: 0, max: N }))
      .map(([a, b, c, d]) => box([Math.min(a, b), Math.min(c, d)], [Math.max(a, b), Math.max(c, d)]));
    const arbOp = fc.record({ kind: fc.constantFrom('write', 'fetch'), space: fc.constantFrom(...spaces), where: arbBox });
    fc.assert(
      fc.property(fc.array(arbOp, { maxLength: 10 }), arbBox, fc.constantFrom(...spaces), (ops, query, target) => {
        const t = new CoherenceTable(range([N, N]));
        const model = Array.from({ length: N * N }, () => new Set<MemorySpaceId>());
        const each = (b: Box, f: (p: number) => void): void => {
          for (let x = b.min[0]!; x < b.max[0]!; x++) for (let y = b.min[1]!; y < b.max[1]!; y++) f(x * N + y);
        };
        for (const op of ops) {
          if (op.kind === 'write') {
            t.written(op.space, op.where);
            each(op.where, (p) => (model[p] = new Set([op.space])));
          } else {
            t.applyCopies(t.copiesFor(op.space, op.where));
            each(op.where, (p) => {
              if (model[p]!.size > 0) model[p]!.add(op.space);
            });
          }
        }
        const copies = t.copiesFor(target, query);
        let covered: Region<2> = emptyRegion(2);
        for (const c of copies) {
          expect(c.to).toBe(target);
          expect(isEmpty(intersection(covered, c.region))).toBe(true);
          covered = union(covered, c.region);
          for (const b of c.region.boxes) each(b, (p) => expect(model[p]!.has(c.from)).toBe(true));
        }
        let lacking = 0;
        let unwritten = 0;
        each(query, (p) => {
          const h = model[p]!;
          if (h.size === 0) unwritten++;
          if (h.size > 0 && !h.has(target)) {
            lacking++;
            expect(contains(covered, id([Math.floor(p / N), p % N]))).toBe(true);
          }
        });
        expect(area(covered)).toBe(lacking);
        expect(area(t.unwritten(query))).toBe(unwritten);
      }),
    );
  });
});
