import { unrefTimer } from '../../engine/clock.js';
import { removeIfEmpty } from './lock-nodes.js';
import type { ZkSession } from './zk-session.js';

/**
 * Deletes the parent node of a key some time after its last release, if nobody queued under it
 * meanwhile, so that parents do not pile up; a hot key keeps its parent instead of deleting and
 * re-creating it on every hand-off.
 */
export class ParentJanitor {
  private readonly due = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly session: () => ZkSession | undefined,
    private readonly delayMs: number,
  ) {}

  /** Deletes `parentPath` after the delay if it is empty then; another release of the key postpones it. */
  schedule(parentPath: string): void {
    clearTimeout(this.due.get(parentPath));
    if (this.delayMs === 0) {
      this.due.delete(parentPath);
      this.sweep(parentPath);
      return;
    }
    this.due.set(parentPath, unrefTimer(() => {
      this.due.delete(parentPath);
      this.sweep(parentPath);
    }, this.delayMs));
  }

  /** Asks for every scheduled parent to be deleted now, if empty, ahead of the session's close (the server keeps the order). */
  flush(): void {
    const session = this.session();
    for (const [path, timer] of this.due) {
      clearTimeout(timer);
      session?.removeBeforeClose(path);
    }
    this.due.clear();
  }

  private sweep(parentPath: string): void {
    const session = this.session();
    if (session && !session.ended.aborted) session.cleanUp(() => removeIfEmpty(session, parentPath));
  }
}
