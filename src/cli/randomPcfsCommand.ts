/** `pxl random-pcfs`: seeded demo data written as .json or .npz. */
import { totalmem } from 'node:os';
import { OutOfMemoryError } from '../core/errors.js';
import { MAX_SET_BREAKPOINTS } from '../pcf/pcfSet.js';
import { randomPcfs } from '../pcf/random.js';
import { checkWritable } from './atomicFile.js';
import type { CommandEnv, RandomOptions } from './commandOptions.js';
import { choosePcfOutputFormat, writePcfOutput } from './pcfFiles.js';
import { STDIO, STDOUT_NAME } from './stdio.js';
import { UsageError } from './terminal.js';
import { plural } from './wording.js';

/** Checks that the set fits, then writes it atomically and prints one line unless --quiet. */
export async function randomPcfsCommand(env: CommandEnv, options: RandomOptions): Promise<void> {
  const breakpoints = options.n * options.points;
  if (breakpoints > MAX_SET_BREAKPOINTS) {
    throw new UsageError(`--n ${options.n} --points ${options.points} make ${breakpoints} breakpoints; a PCF set holds at most ${MAX_SET_BREAKPOINTS}, so lower --n or --points`);
  }
  // Times and values in float64, and offsets: refused before allocating what the machine cannot hold.
  const bytes = breakpoints * 16 + 4 * (options.n + 1);
  if (bytes > totalmem()) {
    throw new OutOfMemoryError(bytes, totalmem(), `--n ${options.n} --points ${options.points} need ${bytes} bytes of memory, more than this machine's ${totalmem()}; lower --n or --points`);
  }
  const format = choosePcfOutputFormat(options.output, options.format);
  if (options.output !== STDIO) await checkWritable(options.output);
  const set = randomPcfs({ n: options.n, points: options.points, seed: options.seed, dtype: 'float64' });
  await writePcfOutput(options.output, format, set, env.io.stdout, env.signal);
  if (options.quiet !== true) {
    env.io.stderr.write(`random-pcfs: ${plural(set.count, 'PCF')} of ${plural(options.points, 'breakpoint')} (seed ${options.seed}) -> ${options.output === STDIO ? STDOUT_NAME : options.output}\n`);
  }
}
