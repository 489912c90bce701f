/**
 * Whole protocol operations out of a NATS server's byte stream, so that the client's parser finds
 * every message's payload in one piece.
 *
 * A socket delivers what the server sends in reads of up to 64 KiB. The NATS client's parser
 * takes a message that fits in one read as a view of it, but one that spans reads (every result
 * part of a cluster run, up to the server's max payload) it gathers in a buffer that grows by
 * doubling from the first read's size: about twice the payload copied and three to four times it
 * allocated, which fed most of a coordinator's garbage collection (each allocation counts as
 * external memory, and enough of it starts a full collection). The gatherer reads each `MSG` or
 * `HMSG` control line, allocates the whole operation (control line, payload, CRLF) once at its
 * exact size and copies the reads into it; the parser then takes the payload as a view, with no
 * copy of its own. Runs of operations that lie whole within one read pass on as views of it.
 *
 * Every chunk it emits holds whole operations only, in the order they arrived; a stream it cannot
 * frame (a size that is not a number) passes on as it is, for the parser to refuse as before.
 */

const NL = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
/** Sizes beyond this are not NATS payloads (the server's limit is 64 MiB): the line passes on as it is. */
const MAX_PAYLOAD = 1 << 30;

/**
 * The payload bytes that follow the control line `bytes[start, nl)` (`nl` at its LF): the last
 * number of a `MSG` or `HMSG` line (its total size, headers included), or -1 for every other
 * operation (INFO, PING, PONG, +OK, -ERR) and for a line whose last word is not a size.
 */
function payloadAfter(bytes: Uint8Array, start: number, nl: number): number {
  const first = bytes[start]! | 0x20;
  const isMsg = first === 0x6d || (first === 0x68 && (bytes[start + 1]! | 0x20) === 0x6d);
  if (!isMsg) return -1;
  let end = nl;
  if (end > start && bytes[end - 1] === CR) end--;
  while (end > start && (bytes[end - 1] === SPACE || bytes[end - 1] === TAB)) end--;
  let size = 0;
  let scale = 1;
  let at = end - 1;
  for (; at > start; at--) {
    const b = bytes[at]!;
    if (b === SPACE || b === TAB) break;
    if (b < DIGIT_0 || b > DIGIT_9) return -1;
    size += (b - DIGIT_0) * scale;
    scale *= 10;
    if (size > MAX_PAYLOAD) return -1;
  }
  return at === end - 1 ? -1 : size;
}

/** Gathered operations take buffers in steps of this many bytes, so that one fits many sizes. */
const FRAME_STEP = 64 * 1024;
/** Buffers kept for the next gathered operations: a few messages of the largest max payload. */
const FRAMES_KEPT = 8;
/** Every buffer a gatherer made, which {@link releaseFrame} may take back. */
const gathered = new WeakSet<ArrayBuffer>();
const spareFrames: ArrayBuffer[] = [];

/** A buffer for a gathered operation of `length` bytes: a spare one when one is large enough. */
function takeFrame(length: number): Uint8Array {
  let best = -1;
  for (let k = 0; k < spareFrames.length; k++) {
    const size = spareFrames[k]!.byteLength;
    if (size >= length && (best < 0 || size < spareFrames[best]!.byteLength)) best = k;
  }
  if (best >= 0) return new Uint8Array(spareFrames.splice(best, 1)[0]!, 0, length);
  const buffer = new ArrayBuffer(Math.ceil(length / FRAME_STEP) * FRAME_STEP);
  gathered.add(buffer);
  return new Uint8Array(buffer, 0, length);
}

/**
 * Hands back the buffer of a gathered operation once its reader is done with every byte of it:
 * `view` is any view of it (a message's `data`). Every message a gatherer made comes in a buffer of
 * its own, which the next gathered operation may then take instead of a new one (a buffer of a
 * megabyte each time counts as external memory, and enough of it starts a full collection). Any
 * other view is ignored. Contract: nothing reads the message's bytes afterwards, not even its
 * subject, reply or headers that the client decodes lazily (decode them first).
 */
export function releaseFrame(view: Uint8Array): void {
  const buffer = view.buffer as ArrayBuffer;
  if (!gathered.has(buffer) || spareFrames.length >= FRAMES_KEPT || spareFrames.includes(buffer)) return;
  spareFrames.push(buffer);
}

/**
 * Gathers a server's reads into chunks of whole operations (see the file comment). One per
 * connection; `push` the reads in order, and `emit` receives the chunks, in order. A chunk that
 * is a view of a read stays valid as long as the read (Node gives each read a buffer of its own);
 * a gathered operation is a buffer of its own, until its reader hands it back ({@link releaseFrame}).
 */
export class FrameGatherer {
  readonly #emit: (chunk: Uint8Array) => void;
  /** A control line whose LF has not arrived yet (a copy). */
  #carry: Uint8Array | undefined;
  /** The operation being gathered, and how much of it has arrived. */
  #frame: Uint8Array | undefined;
  #filled = 0;

  constructor(emit: (chunk: Uint8Array) => void) {
    this.#emit = emit;
  }

  /** Takes the next read of the stream. */
  push(read: Uint8Array): void {
    let bytes = read;
    if (this.#carry !== undefined) {
      // Only the rest of the control line joins it; a payload that follows goes into its frame.
      const nl = bytes.indexOf(NL);
      const line = new Uint8Array(this.#carry.length + (nl < 0 ? bytes.length : nl + 1));
      line.set(this.#carry);
      line.set(nl < 0 ? bytes : bytes.subarray(0, nl + 1), this.#carry.length);
      if (nl < 0) {
        this.#carry = line;
        return;
      }
      this.#carry = undefined;
      bytes = bytes.subarray(nl + 1);
      const size = payloadAfter(line, 0, line.length - 1);
      if (size < 0) {
        this.#emit(line);
      } else {
        this.#frame = takeFrame(line.length + size + 2);
        this.#frame.set(line);
        this.#filled = line.length;
      }
    }
    if (this.#frame !== undefined) {
      const frame = this.#frame;
      const n = Math.min(frame.length - this.#filled, bytes.length);
      frame.set(n === bytes.length ? bytes : bytes.subarray(0, n), this.#filled);
      this.#filled += n;
      if (this.#filled < frame.length) return;
      this.#frame = undefined;
      this.#emit(frame);
      bytes = bytes.subarray(n);
    }
    // Operations bytes[0, at) are whole; `at` is where the next one starts.
    let at = 0;
    while (at < bytes.length) {
      const nl = bytes.indexOf(NL, at);
      if (nl < 0) break;
      const size = payloadAfter(bytes, at, nl);
      const end = size < 0 ? nl + 1 : nl + 1 + size + 2;
      if (end > bytes.length) {
        if (at > 0) this.#emit(bytes.subarray(0, at));
        const frame = takeFrame(end - at);
        frame.set(bytes.subarray(at));
        this.#frame = frame;
        this.#filled = bytes.length - at;
        return;
      }
      at = end;
    }
    if (at > 0) this.#emit(at === bytes.length ? bytes : bytes.subarray(0, at));
    if (at < bytes.length) this.#carry = bytes.slice(at);
  }
}
