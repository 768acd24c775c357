import {
  badCursor,
  decodeNodeCursor,
  encodeNodeCursor,
  scanNode,
  START,
  type NodeCursor,
  type Scanner,
} from './scan-page.js';

/** @internal An ioredis `Cluster`, seen structurally: its master connections. */
export interface ClusterMasters {
  nodes(role: 'master'): (Scanner & { readonly options: { readonly host?: string; readonly port?: number } })[];
}

/** @internal A page's keys, and the cursor of the next page (absent on the last). */
export interface KeysPage {
  readonly found: string[];
  readonly cursor?: string;
}

/**
 * @internal One page of store keys over every master of a Redis Cluster, masters in address order,
 * each SCANned like a single server (scan-page.ts). The cursor is `<master host:port>/<its node
 * cursor>`: the master it stands in, and where in it. A master gone from the cluster since (a
 * failover) is skipped to the next address: its keys are then listed from the master that took
 * them only if that one comes later in address order.
 */
export async function scanClusterPage(
  cluster: ClusterMasters,
  prefix: string,
  limit: number,
  count: number,
  cursor: string | undefined,
  maxRounds: number,
): Promise<KeysPage> {
  const masters = cluster
    .nodes('master')
    .map((node) => ({ node, address: `${node.options.host ?? ''}:${node.options.port ?? ''}` }))
    .sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : 0));
  let index = 0;
  let from: NodeCursor = START;
  if (cursor !== undefined) {
    const slash = cursor.lastIndexOf('/');
    if (slash <= 0) throw badCursor(cursor);
    const address = cursor.slice(0, slash);
    const within = decodeNodeCursor(cursor.slice(slash + 1), cursor);
    index = masters.findIndex((master) => master.address >= address);
    if (index < 0) return { found: [] };
    if (masters[index].address === address) from = within;
  }
  const found: string[] = [];
  let rounds = 0;
  while (index < masters.length) {
    const master = masters[index];
    const part = await scanNode(master.node, prefix, limit - found.length, count, from, maxRounds - rounds);
    found.push(...part.found);
    rounds += part.rounds;
    if (part.next) return { found, cursor: `${master.address}/${encodeNodeCursor(part.next)}` };
    index++;
    from = START;
    if (index < masters.length && (found.length >= limit || rounds >= maxRounds))
      return { found, cursor: `${masters[index].address}/${encodeNodeCursor(START)}` };
  }
  return { found };
}
