/** What `KernelMap.execute` resolves to, as in PXL: whether the stream accepted the work. */
export const Result = Object.freeze({ Success: 'Success', Failure: 'Failure' } as const);
export type Result = (typeof Result)[keyof typeof Result];

/** The lifecycle states of one execute, observable with `KernelMap.getExecuteStatus()`. */
export type ExecuteStatus =
  | 'Idle'
  | 'HostInit'
  | 'DeviceInit'
  | 'Request'
  | 'Waiting'
  | 'DeviceFinalize'
  | 'HostFinalize'
  | 'Fail'
  | 'Cancelled';

/** Batches of the current launch: how many there are, how many cores started, how many finished. */
export interface Progress {
  readonly target: number;
  readonly issued: number;
  readonly done: number;
}
