/**
 * The NATS client's Node transport, changed where a cluster run's result bytes pass:
 * - reading: the server's reads are gathered into whole protocol operations (frameGatherer.ts)
 *   before the client parses them, so a message larger than one socket read is copied once into a
 *   buffer of its size (which its reader may hand back for the next) instead of into one that grows
 *   by doubling;
 * - writing: what the client queued in one turn goes to the socket as one gathered write of its
 *   pieces, instead of being copied into one new buffer first (a result part's payload is a view of
 *   the worker's output slot, which stays untouched until the server has acknowledged the message).
 * - closing: a connection attempt that failed before it was made (timed out while dialling or
 *   waiting for the server's INFO) has its socket destroyed, which the stock transport leaves open.
 * Everything else (TLS, closing a made connection) is the client's own NodeTransport.
 *
 * The client takes its transport from a factory that is global to the process, and the package's
 * `connect` sets the stock one on every call. {@link connectNats} sets this one before connecting;
 * a reconnection makes whichever transport the factory then names. Both speak the same protocol,
 * so a connection is correct with either; only the costs differ.
 */
import { createConnection, type Socket } from 'node:net';
import type { JsMsg } from '@nats-io/jetstream';
import { NatsConnectionImpl, setTransportFactory, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { NodeTransport, nodeResolveHost } from '@nats-io/transport-node/lib/node_transport.js';
import { FrameGatherer, releaseFrame } from './frameGatherer.js';

class FramingTransport extends NodeTransport {
  /** The socket being dialled, which the stock transport keeps to itself until it connects. */
  #dialling: Socket | undefined;

  /** As the stock dial, keeping the socket where {@link close} finds it. */
  override dial(hp: { hostname: string; port: number }): Promise<Socket> {
    return new Promise((resolve, reject) => {
      let dialError: Error | undefined;
      const socket = createConnection(hp.port, hp.hostname, () => {
        this.#dialling = undefined;
        socket.removeAllListeners();
        resolve(socket);
      });
      this.#dialling = socket;
      socket.on('error', (error) => {
        dialError = error;
      });
      socket.on('close', () => {
        this.#dialling = undefined;
        socket.removeAllListeners();
        reject(dialError);
      });
      socket.setNoDelay(true);
    });
  }

  /**
   * The stock close does nothing to a connection not yet made, so an attempt that timed out (a
   * host that drops packets, a port whose service never sends the server's INFO) kept its socket
   * open, and the process alive, long after the caller was told it failed.
   */
  override async close(err?: Error): Promise<void> {
    if (!this.connected) {
      this.#dialling?.destroy();
      this.socket?.destroy();
    }
    return super.close(err);
  }

  /**
   * Called once the socket is connected (and TLS is up), after the first INFO was read: replaces
   * the stock reader, which hands every read to the parser as it is, by one that gathers.
   */
  override setupHandlers(): void {
    super.setupHandlers();
    const gatherer = new FrameGatherer((chunk) => {
      this.yields.push(chunk);
      this.signal.resolve();
    });
    this.socket.removeAllListeners('data');
    this.socket.on('data', (read: Uint8Array) => gatherer.push(read));
  }

  /** Writes `pieces` in order as one gathered write; a failed write is seen by the reader, as for `send`. */
  sendPieces(pieces: readonly Uint8Array[]): void {
    if (this.isClosed || this.socket === undefined) return;
    const socket = this.socket;
    socket.cork();
    try {
      for (const piece of pieces) socket.write(piece);
    } catch {
      // As the stock transport: the reader or the heartbeats notice a broken connection.
    } finally {
      socket.uncork();
    }
  }
}

/** The parts of the client's protocol handler that {@link writeInPieces} uses (flushPending is private in its types). */
interface QueuingProtocol {
  connected: boolean;
  infoReceived: boolean;
  transport: unknown;
  outbound: { buffers: Uint8Array[]; size(): number; reset(): void };
  flushPending(): void;
}

/**
 * Makes `nc` hand what it queued to a {@link FramingTransport} as the pieces they are. The stock
 * flush, which copies them into one buffer, still serves any other transport (after a
 * reconnection that made the stock one) and a connection that is not ready.
 */
function writeInPieces(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol: QueuingProtocol }).protocol;
  const packing = protocol.flushPending;
  protocol.flushPending = function (this: QueuingProtocol): void {
    const transport = this.transport;
    if (!(transport instanceof FramingTransport) || !this.infoReceived || !this.connected || this.outbound.size() === 0) {
      packing.call(this);
      return;
    }
    const pieces = this.outbound.buffers.slice();
    this.outbound.reset();
    transport.sendPieces(pieces);
  };
}

/** Connects as the package's `connect` does, through the framing transport. */
export async function connectNats(options: NodeConnectionOptions): Promise<NatsConnection> {
  setTransportFactory({ factory: () => new FramingTransport(), dnsResolveFn: nodeResolveHost });
  const nc = await NatsConnectionImpl.connect(options);
  writeInPieces(nc);
  return nc;
}

/**
 * Says that nothing will read `msg`'s bytes again (its payload was copied out): a message gathered
 * by this transport gives its buffer to a later one. Its subject, headers and reply subject (which
 * its `info` and acknowledgement use), which the client decodes from those bytes on first use, are
 * decoded now and kept by the message, so acknowledging it later still works.
 */
export function releaseMessage(msg: JsMsg): void {
  // Reading each getter is what counts: it decodes its value and keeps it.
  void msg.subject;
  void msg.headers;
  void msg.info;
  releaseFrame(msg.data);
}
