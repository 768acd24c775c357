import { InvalidLockArgumentError } from '../errors.js';

/**
 * Refuses an options object with a field outside `known` (a misspelt or unsupported option would
 * otherwise be ignored, and its user believe it in force). Throws InvalidLockArgumentError naming
 * the field and the accepted ones.
 */
export function checkKnownFields(options: object, known: readonly string[], where: string): void {
  for (const name of Object.keys(options)) {
    if (!known.includes(name))
      throw new InvalidLockArgumentError(
        `${where}: unknown option ${JSON.stringify(name)} (accepted: ${known.join(', ')})`,
      );
  }
}
