/**
 * Whether a Context records a trace, and its Tracer while it does: `startTrace` and `stopTrace`
 * switch it, Maps ask for the tracer once per execute (undefined when off, so tracing costs nothing
 * then), and `destroy` ends a trace still running.
 */
import type { Backend } from '../backends/backend.js';
import { StateError } from '../core/errors.js';
import { Tracer, type ChromeTrace } from './trace.js';

/** The file the environment variable `PXL_TRACE` names for every Context's trace, if it names one. */
export function traceFileFromEnv(): string | undefined {
  const file = process.env.PXL_TRACE;
  return file === undefined || file === '' ? undefined : file;
}

/** @internal The trace switch of one Context. */
export class ContextTrace {
  readonly #backend: Backend;
  #tracer: Tracer | undefined;

  constructor(backend: Backend) {
    this.#backend = backend;
  }

  /** The trace being recorded, or undefined when none is. */
  get tracer(): Tracer | undefined {
    return this.#tracer;
  }

  /** `Context.startTrace`. @throws StateError when a trace is already being recorded. */
  start(): void {
    if (this.#tracer !== undefined) throw new StateError('startTrace: a trace is already being recorded; stopTrace() it first');
    this.#tracer = new Tracer(this.#backend);
  }

  /** `Context.stopTrace`. @throws StateError when no trace is being recorded. */
  stop(): ChromeTrace {
    const tracer = this.#tracer;
    if (tracer === undefined) throw new StateError('stopTrace: no trace is being recorded; call startTrace() first');
    this.#tracer = undefined;
    return tracer.finish();
  }

  /** Stops recording, if a trace is being recorded, and returns it; before the backend is destroyed. */
  end(): ChromeTrace | undefined {
    const trace = this.#tracer?.finish();
    this.#tracer = undefined;
    return trace;
  }
}
