/**
 * What the machine offers, in Node: its cores, its memory, and shared memory between threads
 * (always there). machine.browser.ts answers the same questions from `navigator`.
 */
import { availableParallelism, totalmem } from 'node:os';

/** CPUs this process may run threads on: the default core count of a Context. */
export function availableCores(): number {
  return availableParallelism();
}

/** Bytes of memory of the machine: a CPU Context's memorySize defaults to half of it. */
export function totalMemory(): number {
  return totalmem();
}

/**
 * Whether threads can share memory (SharedArrayBuffer and Atomics.wait in workers). Always true in
 * Node; a browser page has it only when cross-origin isolated.
 */
export function sharedMemoryAvailable(): boolean {
  return true;
}

/**
 * Why threads cannot share memory here and how to fix it, or undefined where they can (always,
 * in Node).
 */
export function isolationAdvice(): string | undefined {
  return undefined;
}
