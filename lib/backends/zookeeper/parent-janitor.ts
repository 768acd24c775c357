import { unrefTimer } from '../../util/clock.js';
import { removeIfEmpty } from './lock-nodes.js';
import { isLockParentName } from './zk-paths.js';
import type { ZkSession } from './zk-session.js';

/**
 * Deletes the parent node of a key some time after its last release, if nobody queued under it
 * meanwhile, so that parents do not pile up; a hot key keeps its parent instead of deleting and
 * re-creating it on every hand-off. At a backend's first session it also adopts the parents that
 * dead instances left (adoptOrphans).
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
    this.due.set(
      parentPath,
      unrefTimer(() => {
        this.due.delete(parentPath);
        this.sweep(parentPath);
      }, this.delayMs),
    );
  }

  /**
   * Schedules every key parent under `rootPath` as if just released: those empty after the delay go.
   * This catches the parents that instances which died (killed while holding or waiting, or within
   * the delay after a release) left behind, which no janitor would delete otherwise. One listing of
   * the root, once per backend; a root that is missing or unreadable is left alone.
   */
  async adoptOrphans(session: ZkSession, rootPath: string): Promise<void> {
    let names: string[];
    try {
      names = await session.children(rootPath);
    } catch {
      return;
    }
    for (const name of names) {
      const path = `${rootPath}/${name}`;
      if (isLockParentName(name) && !this.due.has(path)) this.schedule(path);
    }
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
