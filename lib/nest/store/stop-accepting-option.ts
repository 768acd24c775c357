import { describe } from '../../engine/lock-options.js';
import { InvalidLockArgumentError } from '../../errors.js';
import { ShutdownMessages } from '../shutdown/shutdown-messages.js';

/** The module option `stopAcceptingOnShutdown`: a boolean, or left out (off). Checked at bootstrap with the other options. */
export function checkStopAccepting(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw new InvalidLockArgumentError(ShutdownMessages.option(describe(value)));
  return value === true;
}
