import { createHash } from 'node:crypto';
import { MAX_OWNER_ID_LENGTH } from '../../engine/holder-identity.js';

/** Characters of the key kept in the `lock_key` column (for people reading the table). */
const DISPLAY_LENGTH = 200;
/** Longest owner id stored as it is (every engine's own, within the column's 255); longer (or non-printable) ones are stored as their hash. */
const OWNER_LENGTH = MAX_OWNER_ID_LENGTH;

/**
 * The primary key of a lock row: sha256 (hex) of the store key's UTF-16 code units, so keys of any
 * length and any characters (NUL, lone surrogates, 64 KiB) map to one fixed-size, collision-resistant value.
 */
export function keyHash(storeKey: string): string {
  return createHash('sha256').update(storeKey, 'utf16le').digest('hex');
}

/** The start of the key, for display only: control characters (PostgreSQL text refuses NUL) and lone surrogates become U+FFFD. */
export function displayKey(storeKey: string): string {
  return (
    Array.from(storeKey)
      .slice(0, DISPLAY_LENGTH)
      .join('')
      // eslint-disable-next-line no-control-regex -- control characters are what it replaces
      .replace(/[\u0000-\u001f\u007f]|\p{Cs}/gu, '\ufffd')
  );
}

/** The owner as stored: itself when short and printable ASCII, else a hash (owners are only compared for equality). */
export function storedOwner(owner: string): string {
  if (owner.length <= OWNER_LENGTH && /^[\x20-\x7e]*$/.test(owner)) return owner;
  return `sha256:${createHash('sha256').update(owner, 'utf16le').digest('hex')}`;
}
