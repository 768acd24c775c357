import type { LockMode } from '../../engine/lock-mode.js';
import { isShared } from '../../engine/lock-mode.js';

/**
 * Key layout: `<escaped lock key>/<read|write>/<escaped owner>`. Escaping keeps `/` out of the
 * lock key, so one lock's prefix never covers another lock's keys (`a/` vs `a/b/...`).
 * `'exclusive'` and `'write'` share the `write` segment: they are the same lock.
 */
const UNSAFE = /[%/]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `%` → `%25`, `/` → `%2F`, and a lone surrogate → `%uXXXX` (UTF-8 would turn every lone
 * surrogate into U+FFFD, merging different keys). Injective: every `%` of the output starts an escape.
 */
export function escapeSegment(value: string): string {
  return value.replace(UNSAFE, (char) => {
    if (char === '%') return '%25';
    if (char === '/') return '%2F';
    return `%u${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

type KeyRole = 'read' | 'write';

function roleOf(mode: LockMode): KeyRole {
  return isShared(mode) ? 'read' : 'write';
}

/** Where one lock's claims live in etcd. */
export class LockKeys {
  /** Every claim of this lock: `<escaped>/`. */
  readonly prefix: Buffer;
  /** The write claims of this lock: `<escaped>/write/`. */
  readonly writePrefix: Buffer;

  constructor(storeKey: string) {
    const base = `${escapeSegment(storeKey)}/`;
    this.prefix = Buffer.from(base);
    this.writePrefix = Buffer.from(`${base}write/`);
  }

  claimKey(mode: LockMode, owner: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(`${roleOf(mode)}/${escapeSegment(owner)}`)]);
  }
}

/**
 * Where one key's semaphore permits live: `<escaped key>%sem/<escaped owner>`. `escapeSegment` never
 * writes `%s` (only `%25`, `%2F`, `%u`), so this prefix is never under a lock's `<escaped key>/`,
 * nor under another key's semaphore prefix, and no lock prefix covers it.
 */
export class SemaphoreKeys {
  readonly prefix: Buffer;

  constructor(storeKey: string) {
    this.prefix = Buffer.from(`${escapeSegment(storeKey)}%sem/`);
  }

  permitKey(owner: string): Buffer {
    return Buffer.concat([this.prefix, Buffer.from(escapeSegment(owner))]);
  }
}

/** The end of etcd's range for "every key starting with `prefix`": the prefix plus one. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}
