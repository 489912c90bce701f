/**
 * The NATS client's Node transport with the server's reads gathered into whole protocol operations
 * (frameGatherer.ts) before the client parses them: a message larger than one socket read is
 * copied once into a buffer of its size instead of into one that grows by doubling. Everything
 * else (dialing, TLS, writing, closing) is the client's own NodeTransport.
 *
 * The client takes its transport from a factory that is global to the process, and the package's
 * `connect` sets the stock one on every call. {@link connectNats} sets this one before connecting;
 * a reconnection makes whichever transport the factory then names. Both speak the same protocol,
 * so a connection is correct with either; only the receiving costs differ.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { NatsConnectionImpl, setTransportFactory, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { NodeTransport, nodeResolveHost } from '@nats-io/transport-node/lib/node_transport.js';
import { FrameGatherer, releaseFrame } from './frameGatherer.js';

class GatheringTransport extends NodeTransport {
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
}

/** Connects as the package's `connect` does, through the gathering transport. */
export function connectNats(options: NodeConnectionOptions): Promise<NatsConnection> {
  setTransportFactory({ factory: () => new GatheringTransport(), dnsResolveFn: nodeResolveHost });
  return NatsConnectionImpl.connect(options);
}

/**
 * Says that nothing will read `msg`'s bytes again (its payload was copied out): a message gathered
 * by this transport gives its buffer to a later one. Its subject, headers and reply subject (which
 * its `info` and acknowledgement use), which the client decodes from those bytes on first use, are
 * decoded now and kept by the message, so acknowledging it later still works.
 */
export function releaseMessage(msg: JsMsg): void {
  decoded(msg.subject, msg.headers, msg.info);
  releaseFrame(msg.data);
}

/** Takes the values its caller read: reading them is what counts (each getter decodes and keeps its value). */
function decoded(..._values: unknown[]): void {}
