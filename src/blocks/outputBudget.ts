/**
 * How many output scalars one device buffer may hold, derived from the device's free memory. The
 * block scheduler turns this budget into a block side.
 */
import { OptionError } from '../core/errors.js';
import { checkInteger, describe } from '../core/validate.js';

/**
 * The output budget, in scalars, for a device with `bytesAvailable` free: `fraction` of the memory,
 * half of that for the output buffer (the other half holds the input data), divided by the element
 * size. That is `floor(bytesAvailable * fraction / 2 / bytesPerElement)`.
 *
 * @param fraction share of the free memory pxl may use, in (0, 1]; default 0.8.
 * @throws {OptionError} for a negative or non-integer byte count, or a fraction outside (0, 1].
 * @example
 * maxOutputElementsFor(1000, 8); // floor(1000 * 0.8 / 2 / 8) = 50
 */
export function maxOutputElementsFor(bytesAvailable: number, bytesPerElement: number, fraction = 0.8): number {
  checkInteger('bytesAvailable', bytesAvailable, 0, Number.MAX_SAFE_INTEGER);
  checkInteger('bytesPerElement', bytesPerElement, 1, 1024);
  if (typeof fraction !== 'number' || !(fraction > 0 && fraction <= 1)) {
    throw new OptionError(`fraction must be a number in (0, 1], got ${describe(fraction)}`);
  }
  return Math.floor((bytesAvailable * fraction) / 2 / bytesPerElement);
}
