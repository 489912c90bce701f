/** `pxl worker`: loaded only when that command runs, since it brings in the NATS clients. */
import { showDawnOutput } from '../backends/webgpu/dawnOutput.js';
import { runWorker } from '../cluster/index.js';
import { natsConnection } from './clusterCliOptions.js';
import type { CommandEnv, WorkerCliOptions } from './commandOptions.js';

/** Runs a worker until the command's signal (SIGTERM, Ctrl-C) aborts; that is a normal end (exit 0). */
export async function workerCommand(env: CommandEnv, options: WorkerCliOptions): Promise<void> {
  if (options.verbose === true) showDawnOutput();
  await runWorker({
    nats: options.nats,
    ...natsConnection(options),
    ...(options.cores !== undefined && { cores: options.cores }),
    device: options.device,
    ...(options.id !== undefined && { id: options.id }),
    ...(options.modules !== undefined && { modules: options.modules.split(',').map((m) => m.trim()).filter((m) => m !== '') }),
    signal: env.signal,
    verbose: options.verbose === true,
    log: (line) => {
      if (options.quiet !== true) env.io.stderr.write(`pxl worker: ${line}\n`);
    },
  });
}
