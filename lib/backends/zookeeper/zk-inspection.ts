import { InvalidLockArgumentError } from '../../errors.js';
import {
  MAX_REPORTED_WAITERS,
  type ListPage,
  type ListRequest,
  type LockInspection,
  type StoredHolder,
  type StoredLockState,
  type StoredWaiter,
} from '../../engine/lock-inspection.js';
import { removeIfPresent } from './lock-nodes.js';
import { ZK_ERROR, zkErrorCode } from './zk-driver.js';
import { keyNodeName, lockParentPath, parseLockNode, type LockNode } from './zk-paths.js';
import type { ZkSession } from './zk-session.js';
import type { ZkSessions } from './zk-sessions.js';

/**
 * Inspection of the zookeeper backend: a key's children are its queue, so it knows the holders (the
 * first write node, or the read nodes before the first write node), their owner ids (node data)
 * and fences (creation zxid), and who waits, in sequence order (the waiting nodes' data: one read
 * per waiter shown, at most MAX_REPORTED_WAITERS, in parallel). It cannot know remaining leases: a lock lives as
 * long as its holder's session. `list` reads the children of the root path (ZooKeeper has no
 * paged listing) and then only the `limit` key nodes of one page; keys too long for a readable
 * node name (over ~200 escaped characters) are not listed, only inspected.
 */
export class ZookeeperInspection implements LockInspection {
  constructor(private readonly sessions: ZkSessions) {}

  async inspect(storeKey: string): Promise<StoredLockState> {
    const session = await this.sessions.get();
    return this.state(storeKey, await this.read(session, lockParentPath(this.sessions.options.rootPath, storeKey)));
  }

  /** Key nodes in name order after `cursor` (the last name of the previous page). */
  async list({ prefix, limit, cursor }: ListRequest): Promise<ListPage> {
    if (cursor !== undefined) checkZkCursor(cursor);
    const session = await this.sessions.get();
    const wanted = keyNodeName(prefix);
    if (!wanted.startsWith('k-')) return { locks: [] };
    const names = (await this.childrenOrNone(session, this.sessions.options.rootPath))
      .filter((name) => name.startsWith(wanted) && (cursor === undefined || name > cursor))
      .sort();
    const page = names.slice(0, limit);
    const locks = await Promise.all(
      page.map(async (name) =>
        this.state(
          unescapeNodeName(name.slice(2)),
          await this.read(session, `${this.sessions.options.rootPath}/${name}`),
        ),
      ),
    );
    return names.length > limit ? { locks, cursor: page[page.length - 1] } : { locks };
  }

  /** Deletes the holders' nodes: each holder's watch fires at once; the next holder's node is younger, so its zxid is larger. */
  async forceRelease(storeKey: string): Promise<StoredHolder[]> {
    const session = await this.sessions.get();
    const parent = lockParentPath(this.sessions.options.rootPath, storeKey);
    const { holders } = await this.read(session, parent);
    await Promise.all(holders.map((holder) => removeIfPresent(session, `${parent}/${holder.node.name}`)));
    return holders.map(({ holder }) => holder);
  }

  private state(storeKey: string, { holders, waiting, waiters }: KeyNodes): StoredLockState {
    if (holders.length === 0) return { storeKey, holders: [], waiting, waiters };
    return {
      storeKey,
      mode: holders[0].node.shared ? 'read' : 'exclusive',
      holders: holders.map(({ holder }) => holder),
      waiting,
      waiters,
    };
  }

  private async read(session: ZkSession, parent: string): Promise<KeyNodes> {
    const nodes = (await this.childrenOrNone(session, parent))
      .map(parseLockNode)
      .filter((node): node is LockNode => node !== undefined)
      .sort((x, y) => x.sequence - y.sequence);
    const firstWriter = nodes.findIndex((node) => !node.shared);
    const holding =
      firstWriter === 0 ? nodes.slice(0, 1) : nodes.slice(0, firstWriter < 0 ? nodes.length : firstWriter);
    const queued = nodes.slice(holding.length);
    const [holders, waiters] = await Promise.all([
      Promise.all(
        holding.map(async (node) => {
          const found = await session.read(`${parent}/${node.name}`);
          if (!found) return undefined;
          return { node, holder: { ...ownerOf(found.data), fence: Number(found.stat.czxid.readBigUInt64BE(0)) } };
        }),
      ),
      // A waiter whose node went (it gave up, or took the lock) since the children were read is left out.
      Promise.all(
        queued.slice(0, MAX_REPORTED_WAITERS).map(async (node) => {
          const found = await session.read(`${parent}/${node.name}`);
          return found ? ownerOf(found.data) : undefined;
        }),
      ),
    ]);
    return {
      holders: holders.filter((entry) => entry !== undefined),
      waiting: queued.length,
      waiters: waiters.filter((waiter) => waiter !== undefined),
    };
  }

  private async childrenOrNone(session: ZkSession, path: string): Promise<string[]> {
    try {
      return await session.children(path);
    } catch (error) {
      if (zkErrorCode(error) === ZK_ERROR.NO_NODE) return [];
      throw error;
    }
  }
}

interface KeyNodes {
  readonly holders: readonly { node: LockNode; holder: StoredHolder }[];
  readonly waiting: number;
  readonly waiters: readonly StoredWaiter[];
}

function ownerOf(data: Buffer): { owner?: string } {
  return data.length > 0 ? { owner: data.toString('utf8') } : {};
}

/** Undoes keyNodeName's escaping (`%XX`, `%uXXXX`). */
function unescapeNodeName(escaped: string): string {
  return escaped.replace(
    /%u([0-9a-f]{4})|%([0-9a-f]{2})/g,
    (_match, unit: string | undefined, byte: string | undefined) => String.fromCharCode(parseInt(unit ?? byte!, 16)),
  );
}

function checkZkCursor(cursor: string): void {
  if (!cursor.startsWith('k-'))
    throw new InvalidLockArgumentError(`not a list() cursor of this backend: ${JSON.stringify(cursor.slice(0, 40))}`);
}
