import type { Dims } from '../core/dims.js';
import type { DType, TypedArrayOf } from '../core/dtype.js';
import { ArgumentError, StateError } from '../core/errors.js';
import type { Region } from '../core/region.js';
import type { Context } from '../pxl/context.js';
import type { AccessMode } from './accessMode.js';
import { Accessor } from './accessor.js';
import type { CommandGroup, CommandGroupSpec, HostTaskHandle, HostView } from './commandGroup.js';
import type { TaskRun } from './executor.js';
import { taskLabel, type TaskRecord } from './task.js';

/**
 * The run of a host task: its function on the main thread, after the submitting code has gone on,
 * with views of the accessors its own command group declared, valid only while the function runs.
 */
export function hostTaskRun(ctx: Context, cg: CommandGroup, spec: Extract<CommandGroupSpec, { kind: 'host' }>, task: TaskRecord): TaskRun {
  return async () => {
    // Never inside submit: the function runs after the submitting code has gone on.
    await Promise.resolve();
    let open = true;
    const handle: HostTaskHandle = Object.freeze({
      range: spec.range,
      view: <T extends DType, D extends Dims, M extends AccessMode>(accessor: Accessor<T, D, M>): HostView<T, D, M> => {
        if (!open) throw new StateError(`host task ${taskLabel(task)} has ended: views are valid only while its function runs`);
        const at = accessor instanceof Accessor && accessor.group === cg ? spec.accessors.indexOf(accessor as unknown as Accessor) : -1;
        if (at < 0) throw new ArgumentError(`host task ${taskLabel(task)} has a view only of the accessors its own command group declared`);
        const buffer = accessor.buffer;
        const data = ctx.hostView(buffer.array.ptr, buffer.dtype).subarray(0, buffer.size) as TypedArrayOf<T>;
        return Object.freeze({ data, shape: buffer.range, region: task.accesses[at]!.region as Region<D>, mode: accessor.mode });
      },
    });
    try {
      await spec.fn(handle);
    } finally {
      open = false;
    }
  };
}
