/**
 * frameGatherer.ts: whatever reads a server's stream arrives in, the client's parser sees the same
 * operations as from the whole stream at once, every chunk ends where an operation ends, and a
 * message that spans reads arrives whole, in a buffer that its reader may hand back for the next one.
 */
import fc from 'fast-check';
import { Parser, State } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { FrameGatherer, releaseFrame } from '../src/cluster/frameGatherer.js';

const te = new TextEncoder();

interface Seen {
  kind: number;
  subject: string;
  reply: string;
  hdr: number;
  data: number[];
}

/** A parser that records every operation it dispatches, its message payloads copied out. */
function recorder(): { parser: Parser; seen: Seen[] } {
  const seen: Seen[] = [];
  const td = new TextDecoder();
  const parser = new Parser({
    push: (v) => {
      const e = v as unknown as { kind: number; msg?: { subject: Uint8Array; reply?: Uint8Array; hdr: number }; data?: Uint8Array };
      seen.push({
        kind: e.kind,
        subject: e.msg === undefined ? '' : td.decode(e.msg.subject),
        reply: e.msg?.reply === undefined ? '' : td.decode(e.msg.reply),
        hdr: e.msg?.hdr ?? -2,
        data: [...(e.data ?? [])],
      });
    },
  });
  return { parser, seen };
}

/** One operation of the server's protocol, as bytes. */
const operation = fc.oneof(
  fc.record({ subject: fc.constantFrom('a', 'pxl.r.result', '_INBOX.x'), reply: fc.constantFrom('', '$JS.ACK.s.c.1.2.3.4.5'), size: fc.nat(300), fill: fc.nat(255) }).map(({ subject, reply, size, fill }) =>
    [...te.encode(`MSG ${subject} 1${reply === '' ? '' : ` ${reply}`} ${size}\r\n`), ...new Uint8Array(size).fill(fill), 13, 10]),
  fc.record({ size: fc.nat(300), fill: fc.nat(255) }).map(({ size, fill }) => {
    const head = te.encode('NATS/1.0\r\nPxl-Block: 7\r\n\r\n');
    return [...te.encode(`HMSG pxl.r.result 2 $JS.ACK.x ${head.length} ${head.length + size}\r\n`), ...head, ...new Uint8Array(size).fill(fill), 13, 10];
  }),
  fc.constantFrom('PING\r\n', 'PONG\r\n', '+OK\r\n', "-ERR 'Stale Connection'\r\n", 'INFO {"server_id":"x","max_payload":1048576}\r\n').map((line) => [...te.encode(line)]),
);

describe('frame gatherer', () => {
  it('gives the parser the same operations as the whole stream, each chunk ending at an operation', () => {
    fc.assert(
      fc.property(fc.array(operation, { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 20 }), (ops, cuts) => {
        const stream = Uint8Array.from(ops.flat());
        const whole = recorder();
        whole.parser.parse(stream);
        const split = recorder();
        const gatherer = new FrameGatherer((chunk) => {
          split.parser.parse(chunk);
          expect(split.parser.state).toBe(State.OP_START);
        });
        const at = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const to of [...at, stream.length]) {
          gatherer.push(stream.subarray(from, to));
          from = to;
        }
        expect(split.seen).toEqual(whole.seen);
      }),
      { numRuns: 300 },
    );
  });

  it('hands a message that spans reads to the parser as one chunk with the whole payload', () => {
    const payload = new Uint8Array(200_000).map((_, k) => k % 251);
    const stream = Uint8Array.from([...te.encode(`PING\r\nMSG big 1 ${payload.length}\r\n`), ...payload, ...te.encode('\r\nPONG\r\n')]);
    const chunks: Uint8Array[] = [];
    const gatherer = new FrameGatherer((chunk) => chunks.push(chunk));
    for (let k = 0; k < stream.length; k += 65_536) gatherer.push(stream.slice(k, k + 65_536));
    const text = chunks.map((c) => new TextDecoder().decode(c.subarray(0, 12)));
    expect(text).toEqual(['PING\r\n', `MSG big 1 ${payload.length}`.slice(0, 12), 'PONG\r\n']);
    expect(chunks[1]!.length).toBe(stream.length - 12);
  });

  it('gives a released buffer to the next gathered message, and ignores views of reads', () => {
    const frames: Uint8Array[] = [];
    const gatherer = new FrameGatherer((chunk) => frames.push(chunk));
    const message = (fill: number): Uint8Array => Uint8Array.from([...te.encode('MSG m 1 100000\r\n'), ...new Uint8Array(100_000).fill(fill), 13, 10]);
    const first = message(1);
    gatherer.push(first.slice(0, 1000));
    gatherer.push(first.slice(1000));
    expect(frames).toHaveLength(1);
    const released = frames[0]!.buffer;
    releaseFrame(frames[0]!.subarray(17, 30));
    const read = te.encode('PING\r\n');
    releaseFrame(read);
    const second = message(2);
    gatherer.push(second.slice(0, 10));
    gatherer.push(second.slice(10));
    expect(frames).toHaveLength(2);
    expect(frames[1]!.buffer === released).toBe(true);
    expect(frames[1]![100]).toBe(2);
    expect(frames[1]!.length).toBe(second.length);
  });

  it('passes a control line whose size is not a number on as it is', () => {
    const chunks: number[][] = [];
    const gatherer = new FrameGatherer((chunk) => chunks.push([...chunk]));
    const bad = te.encode('MSG a 1 12x\r\nPING\r\n');
    gatherer.push(bad);
    expect(chunks.flat()).toEqual([...bad]);
  });
});
