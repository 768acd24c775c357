import { parseLockNode, type LockNode } from './zk-paths.js';

/** Where a claim's node stands in its lock's queue. */
type QueuePosition =
  | { readonly state: 'held' }
  /** Busy: `watch` is the one node whose deletion may let this claim in (no herd effect). */
  | { readonly state: 'waiting'; readonly watch: string }
  /** The claim's node is not among the children (deleted behind its back, or its session ended). */
  | { readonly state: 'missing' };

/**
 * Decides from the children of a lock parent, ordered by sequence number:
 * an exclusive (write) node holds the lock when it is the lowest and waits for the node just
 * before it; a read node holds it when no write node is ahead and waits for the last write node
 * ahead of it. So readers share, writers exclude everyone, and a waiting writer holds back the
 * readers queued after it (it is ahead of them): it is never starved.
 */
export function queuePosition(children: readonly string[], ownName: string, shared: boolean): QueuePosition {
  const nodes = children.map(parseLockNode).filter((node): node is LockNode => node !== undefined);
  nodes.sort((x, y) => x.sequence - y.sequence);
  const index = nodes.findIndex((node) => node.name === ownName);
  if (index < 0) return { state: 'missing' };
  if (!shared) return index === 0 ? { state: 'held' } : { state: 'waiting', watch: nodes[index - 1].name };
  for (let i = index - 1; i >= 0; i--) {
    if (!nodes[i].shared) return { state: 'waiting', watch: nodes[i].name };
  }
  return { state: 'held' };
}
