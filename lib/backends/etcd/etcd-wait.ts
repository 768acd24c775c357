import type { Etcd3, Watcher } from 'etcd3';
import { MAX_TIMER_MS } from '../../engine/clock.js';

/**
 * @internal
 * Resolves when `key` changes (is deleted) at or after `fromRevision`, after `maxMs`, or when
 * `signal` aborts, whichever comes first. Starting at the revision of the read that saw the key
 * means a deletion in between is delivered too, so nothing is missed. Never rejects.
 */
export function waitForKeyChange(client: Etcd3, key: Buffer, fromRevision: number, maxMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let watcher: Watcher | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      watcher?.cancel().catch(() => undefined);
      resolve();
    };
    const timer = setTimeout(finish, Math.min(Math.max(0, maxMs), MAX_TIMER_MS));
    signal.addEventListener('abort', finish, { once: true });
    if (signal.aborted) return finish();
    try {
      // watcher() attaches at once (create() would resolve a tick after events may have fired).
      watcher = client.watch().key(key).startRevision(String(fromRevision)).watcher();
      watcher.on('delete', finish);
      watcher.on('put', finish);
      // A failed watch (compacted revision, closed client) wakes the waiter: the engine simply tries again.
      watcher.on('error', finish);
    } catch {
      finish();
    }
  });
}
