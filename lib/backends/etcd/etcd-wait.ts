import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import { MAX_TIMER_MS } from '../../util/clock.js';

/**
 * @internal
 * Resolves when `key` changes (is deleted) at or after `fromRevision`, after `maxMs`, or when
 * `signal` aborts, whichever comes first: `true` when `maxMs` passed (see {@link watchUntil}).
 * Starting at the revision of the read that saw the key means a deletion in between is delivered
 * too, so nothing is missed. Never rejects.
 */
export function waitForKeyChange(
  client: Etcd3,
  key: Buffer,
  fromRevision: number,
  maxMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  return watchUntil(
    () => client.watch().key(key).startRevision(String(fromRevision)).watcher(),
    (watcher, finish) => {
      watcher.on('delete', finish);
      watcher.on('put', finish);
    },
    maxMs,
    signal,
  );
}

/**
 * @internal
 * Resolves once `count` keys under `prefix` created before `revision` were deleted at or after
 * `fromRevision`, or the key created at `revision` (the waiter's own) was deleted, or after `maxMs`,
 * or when `signal` aborts: `true` when `maxMs` passed (see {@link watchUntil}). Deletions of keys
 * created later are not counted, so only the waiter they let in wakes. Never rejects.
 */
export function waitForDeletionsAhead(
  client: Etcd3,
  prefix: Buffer,
  revision: number,
  count: number,
  fromRevision: number,
  maxMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  let left = count;
  const build = () =>
    client.watch().prefix(prefix).startRevision(String(fromRevision)).only('delete').withPreviousKV().watcher();
  return watchUntil(
    build,
    (watcher, finish) => {
      watcher.on('delete', (_kv: IKeyValue, previous?: IKeyValue) => {
        // Without the previous value (compacted) its place is unknown: count it, at worst a spurious wake-up.
        const created = previous ? Number(previous.create_revision) : 0;
        // The waiter's own key went (deleted behind its back): it must queue again, at once.
        if (created === revision) return finish();
        if (created > revision) return;
        if (--left <= 0) finish();
      });
    },
    maxMs,
    signal,
  );
}

/**
 * Runs a watcher until `attach`'s handlers call `finish`, `maxMs` passes, `signal` aborts or the
 * watch fails. Resolves `true` only when `maxMs` passed with nothing heard: nothing changed, or the
 * stream went silent (its member hangs).
 */
function watchUntil(
  build: () => Watcher,
  attach: (watcher: Watcher, finish: () => void) => void,
  maxMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  return new Promise((resolve) => {
    let watcher: Watcher | undefined;
    let done = false;
    const end = (timedOut: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      watcher?.cancel().catch(() => undefined);
      resolve(timedOut);
    };
    const finish = () => end(false);
    const timer = setTimeout(() => end(true), Math.min(Math.max(0, maxMs), MAX_TIMER_MS));
    signal.addEventListener('abort', finish, { once: true });
    if (signal.aborted) return finish();
    try {
      // watcher() attaches at once (create() would resolve a tick after events may have fired).
      watcher = build();
      attach(watcher, finish);
      // A failed watch (compacted revision, closed client) wakes the waiter: the engine simply tries again.
      watcher.on('error', finish);
    } catch {
      finish();
    }
  });
}
