import { createHash } from 'node:crypto';
import { isShared, type LockMode } from '../../engine/lock-mode.js';

/** Longest escaped key kept readable in the znode name; longer keys are shortened and hashed. */
const MAX_READABLE_NAME = 200;
const SAFE_CHAR = /[A-Za-z0-9_.:@=+,-]/;
const LOCK_NODE = /^(read|write)-([0-9a-f]+)-(\d{10})$/;

/**
 * The key as ONE znode name, injectively: safe characters stay, every other UTF-16 code unit
 * becomes `%XX` or `%uXXXX` (so `/`, `.`-only names, control characters and lone surrogates
 * never reach ZooKeeper). Long keys become a readable head plus the SHA-256 of the whole key.
 */
export function keyNodeName(storeKey: string): string {
  let escaped = '';
  for (let i = 0; i < storeKey.length && escaped.length <= MAX_READABLE_NAME; i++) {
    const char = storeKey[i];
    const unit = storeKey.charCodeAt(i);
    if (SAFE_CHAR.test(char)) escaped += char;
    else escaped += unit < 0x100 ? `%${unit.toString(16).padStart(2, '0')}` : `%u${unit.toString(16).padStart(4, '0')}`;
  }
  if (escaped.length <= MAX_READABLE_NAME) return `k-${escaped}`;
  const digest = createHash('sha256').update(Buffer.from(storeKey, 'utf16le')).digest('hex');
  return `h-${escaped.slice(0, 64)}-${digest}`;
}

/** Whether a child of the root is a key's parent node (named by keyNodeName). */
export function isLockParentName(name: string): boolean {
  return name.startsWith('k-') || name.startsWith('h-');
}

/** The persistent node whose children queue for `storeKey`. */
export function lockParentPath(rootPath: string, storeKey: string): string {
  return `${rootPath}/${keyNodeName(storeKey)}`;
}

/** The name prefix of a claim's node; ZooKeeper appends a 10-digit sequence number. */
export function lockNodePrefix(mode: LockMode, attemptId: string): string {
  return `${isShared(mode) ? 'read' : 'write'}-${attemptId}-`;
}

export interface LockNode {
  readonly name: string;
  readonly shared: boolean;
  readonly attemptId: string;
  readonly sequence: number;
}

/** Parses a child of a lock parent; `undefined` for names this library did not create. */
export function parseLockNode(name: string): LockNode | undefined {
  const match = LOCK_NODE.exec(name);
  if (!match) return undefined;
  return { name, shared: match[1] === 'read', attemptId: match[2], sequence: Number(match[3]) };
}
