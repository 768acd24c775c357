import { createHash } from 'node:crypto';
import { InvalidLockArgumentError } from '../../errors.js';

/** @internal One Redis server that SCANs: a plain client, or one master of a Cluster. */
export interface Scanner {
  scan(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
}

/** @internal Where a listing stands in one server: its SCAN cursor, and the keys of that SCAN batch already returned. */
export interface NodeCursor {
  readonly scan: string;
  readonly returned: ReadonlySet<string>;
}

/** @internal One server's part of a page: the keys found, and where to go on (absent: the server is done). */
interface NodeScan {
  readonly found: string[];
  readonly next?: NodeCursor;
  readonly rounds: number;
}

/** The names a key's state lives under, after its `{tag}`. */
const STATE_SUFFIXES = new Set(['', ':readers', ':queue', ':sem']);

export const START: NodeCursor = { scan: '0', returned: new Set() };

/**
 * @internal Up to `room` store keys starting with `prefix` from one server, SCANning from `from` for at
 * most `maxRounds` rounds (`COUNT` of `count`). A page that ends inside one SCAN batch names the keys
 * it returned from that batch: asked again, SCAN may answer that cursor with other keys (some
 * released, or the table resized), so those are skipped rather than the rest of the batch.
 */
export async function scanNode(
  node: Scanner,
  prefix: string,
  room: number,
  count: number,
  from: NodeCursor,
  maxRounds: number,
): Promise<NodeScan> {
  const pattern = `{${escapeGlob(prefix)}*`;
  const found: string[] = [];
  let { scan, returned } = from;
  for (let round = 0; ; round++) {
    const [after, names] = await node.scan(scan, 'MATCH', pattern, 'COUNT', count);
    const batch = storeKeysOf(names, prefix);
    const fresh = returned.size === 0 ? batch : batch.filter((storeKey) => !returned.has(shortId(storeKey)));
    const left = room - found.length;
    if (fresh.length > left) {
      const taken = fresh.slice(0, left);
      found.push(...taken);
      return { found, next: { scan, returned: new Set([...returned, ...taken.map(shortId)]) }, rounds: round + 1 };
    }
    found.push(...fresh);
    returned = new Set();
    scan = after;
    if (scan === '0') return { found, rounds: round + 1 };
    if (found.length >= room || round + 1 >= maxRounds) return { found, next: { scan, returned }, rounds: round + 1 };
  }
}

/** `<SCAN cursor>:<shortIds of the keys of that SCAN batch already returned, joined by '.'>`. */
export function encodeNodeCursor(cursor: NodeCursor): string {
  return `${cursor.scan}:${[...cursor.returned].join('.')}`;
}

export function decodeNodeCursor(text: string, whole: string): NodeCursor {
  const match = /^(\d+):((?:[\w-]{8})(?:\.[\w-]{8})*)?$/.exec(text);
  if (!match) throw badCursor(whole);
  return { scan: match[1], returned: new Set(match[2] ? match[2].split('.') : []) };
}

export function badCursor(cursor: string): InvalidLockArgumentError {
  return new InvalidLockArgumentError(`not a list() cursor of this backend: ${JSON.stringify(cursor.slice(0, 40))}`);
}

/** The distinct store keys behind SCAN's names (`{key}`, `{key}:readers`, ...), sorted. */
function storeKeysOf(names: readonly string[], prefix: string): string[] {
  const keys = new Set<string>();
  for (const name of names) {
    const end = name.lastIndexOf('}');
    if (!name.startsWith('{') || end < 0 || !STATE_SUFFIXES.has(name.slice(end + 1))) continue;
    const storeKey = name.slice(1, end);
    if (storeKey.startsWith(prefix)) keys.add(storeKey);
  }
  return [...keys].sort();
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}

/** 48 bits of the key's SHA-1 (8 characters): short enough for a cursor, and two keys of one SCAN batch do not meet. */
function shortId(storeKey: string): string {
  return createHash('sha1').update(storeKey).digest('base64url').slice(0, 8);
}
