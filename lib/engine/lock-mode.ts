/** `'exclusive'` and `'write'` are the same lock; `'read'` holders share the key with each other. */
export type LockMode = 'exclusive' | 'read' | 'write';

export const LOCK_MODES: readonly LockMode[] = ['exclusive', 'read', 'write'];

/** Whether a holder in `mode` may share the key with holders in `other`. */
export function isShared(mode: LockMode): boolean {
  return mode === 'read';
}
