import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Who holds a lock, as operators see it: the app instance, the caller's optional label, and when
 * the claim was made.
 *
 * All three travel inside the owner id that every store already keeps with a held lock (the Redis value,
 * the SQL `owner` column, the ZooKeeper node's data, the etcd value), so acquiring stores nothing
 * more and the plain acquire path does no extra work. An owner id is
 * `<escaped instance>|<escaped label>|<unique id>|<claimed at>`: printable ASCII of at most
 * {@link MAX_OWNER_ID_LENGTH} characters (the SQL column keeps it as it is), unique by its unique id
 * (a random token of the process and a sequence number; a uuid in earlier versions).
 * The parts are percent-escaped UTF-8 and cut to a bounded length: they are text to show, never
 * parsed as anything else. `<claimed at>` is the epoch ms (decimal, by the claiming instance's
 * clock) when the acquisition made its claim: the id never changes afterwards, so renewals and
 * re-entrant calls keep it. A holder that waited its turn claimed when it began waiting.
 */
interface HolderIdentity {
  readonly instance?: string;
  readonly label?: string;
  /** Epoch ms when the claim was made; absent in owner ids of older versions. */
  readonly claimedAt?: number;
}

/** Longest owner id: escaped instance (64) and label (96), a unique id (at most 36), a time (16) and three separators. */
export const MAX_OWNER_ID_LENGTH = 215;
/** Escaped characters kept from an instance label (the owner id stays <= MAX_OWNER_ID_LENGTH characters). */
const MAX_ESCAPED_INSTANCE = 64;
/** Escaped characters kept from a per-call label. */
const MAX_ESCAPED_LABEL = 96;
/** Characters a label may have before it is cut, so escaping a huge string costs little. */
const MAX_RAW_LABEL = MAX_ESCAPED_LABEL;

const SEPARATOR = '|';
/** Characters kept as they are; every other one (a code point, lone surrogates included) is percent-escaped. */
const UNSAFE_CHAR = /[^A-Za-z0-9 _.:@=+,#()[\]{}/~!*'-]/gu;
const UNSAFE_CHAR_ONE = /[^A-Za-z0-9 _.:@=+,#()[\]{}/~!*'-]/u;

/** Percent-escapes `value`'s UTF-8 bytes outside a safe set, cut at a whole character to at most `max` characters. */
export function escapeHolderPart(value: string, max: number): string {
  const head = value.length > max ? value.slice(0, max) : value;
  // One pass that calls back only for unsafe characters: a plain label costs a regex scan.
  const escaped = head.replace(UNSAFE_CHAR, percentEncode);
  return escaped.length <= max ? escaped : cutAtCharacter(head, max);
}

function percentEncode(char: string): string {
  let encoded = '';
  for (const byte of Buffer.from(char, 'utf8')) encoded += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return encoded;
}

/** The escaped form of the longest start of `value` that fits in `max` characters. */
function cutAtCharacter(value: string, max: number): string {
  let escaped = '';
  for (const char of value) {
    const piece = UNSAFE_CHAR_ONE.test(char) ? percentEncode(char) : char;
    if (escaped.length + piece.length > max) break;
    escaped += piece;
  }
  return escaped;
}

/** Undoes `escapeHolderPart`; a cut multi-byte character decodes as U+FFFD. Never throws. */
export function unescapeHolderPart(escaped: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; i++) {
    if (escaped[i] === '%' && /^[0-9A-F]{2}$/.test(escaped.slice(i + 1, i + 3))) {
      bytes.push(parseInt(escaped.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(escaped.charCodeAt(i) & 0x7f);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The part of every owner id of one engine that names its instance: computed once per engine. */
export function ownerIdPrefix(instance: string): string {
  return escapeHolderPart(instance, MAX_ESCAPED_INSTANCE) + SEPARATOR;
}

/**
 * 96 random bits drawn once per process (per copy of this module): followed by a sequence number,
 * they make an id as unique as a uuid for a fraction of its cost (a uuid per acquisition allocated
 * more than the rest of the owner id).
 */
const PROCESS_TOKEN = randomBytes(12).toString('base64url');
let sequence = 0;

/** A fresh owner id for one acquisition: unique by its unique id, carrying the instance, the label and the time of the claim. */
export function holderOwnerId(prefix: string, label: string | undefined, claimedAt: number = Date.now()): string {
  const id = PROCESS_TOKEN + sequence++;
  // Decimal: an integer double prints several times faster than in base 36.
  return label === undefined
    ? `${prefix}${SEPARATOR}${id}${SEPARATOR}${claimedAt}`
    : `${prefix}${escapeHolderPart(label, MAX_RAW_LABEL)}${SEPARATOR}${id}${SEPARATOR}${claimedAt}`;
}

/** Epoch ms in decimal, up to the largest valid Date (8.64e15). */
const CLAIMED_AT = /^\d{1,16}$/;

/**
 * The instance, label and claim time an owner id carries; empty for owner ids of other forms
 * (hashed SQL owners); no `claimedAt` in the three-part ids of older versions.
 */
export function parseHolderIdentity(owner: string | undefined): HolderIdentity {
  if (owner === undefined) return {};
  const parts = owner.split(SEPARATOR);
  if (parts.length !== 3 && parts.length !== 4) return {};
  const [instance, label, , time] = parts as [string, string, string, string | undefined];
  const claimedAt = time !== undefined && CLAIMED_AT.test(time) ? Number(time) : undefined;
  return {
    instance: unescapeHolderPart(instance),
    ...(label === '' ? {} : { label: unescapeHolderPart(label) }),
    ...(claimedAt === undefined ? {} : { claimedAt }),
  };
}

/** `hostname:pid`: how this app instance is named to operators unless the module options name it. */
export function defaultInstanceLabel(): string {
  return `${hostname()}:${process.pid}`;
}
