/**
 * One live coordinator per run. A run written to a file has an id that hashes what it computes and
 * where, so that a rerun finds what a killed coordinator left; the same command started twice (in
 * two shells, or on two machines whose paths are alike) therefore names the same streams, and the
 * second coordinator would clear the streams the first is using, leaving the first waiting forever
 * for results that no longer come. A live coordinator answers on its run's core subject; a new one
 * asks there before it touches the run's streams, and refuses the run when someone answers.
 */
import { hostname } from 'node:os';
import { RequestError, TimeoutError, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { OptionError } from '../core/errors.js';
import type { RunNames } from './protocol.js';

/** How long a live coordinator has to answer; no answer (or no responder at all) means none runs. */
const CLAIM_WAIT_MS = 2000;

/**
 * Claims run `names` for this process: answers on its coordinator subject until the returned
 * subscription is unsubscribed.
 * @throws (rejects) OptionError when another coordinator of the same run answers.
 */
export async function claimRun(nc: NatsConnection, names: RunNames): Promise<Subscription> {
  let other: string | undefined;
  try {
    other = (await nc.request(names.coordinatorSubject, undefined, { timeout: CLAIM_WAIT_MS })).string();
  } catch (error) {
    const nobody = error instanceof TimeoutError || (error instanceof RequestError && error.isNoResponders());
    if (!nobody) throw error;
  }
  if (other !== undefined) {
    throw new OptionError(`another coordinator (${other}) is running this same run (the same inputs and operation into the same output file) through this NATS server right now; wait for it to finish, or write to another output file`);
  }
  const me = `${hostname()}:${process.pid}`;
  return nc.subscribe(names.coordinatorSubject, { callback: (error, msg) => {
    if (error === null) msg.respond(me);
  } });
}
