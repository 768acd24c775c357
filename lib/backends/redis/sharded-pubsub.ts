import type { RedisClient } from './redis-client.js';
import { ShardSubscriptions } from './shard-subscriptions.js';
import { afterScriptFailed, luaScript, runScript, sendScript, type LuaScript } from './run-script.js';

/**
 * @internal How releases are announced: `'plain'` (PUBLISH / SUBSCRIBE) or `'sharded'` (SPUBLISH /
 * SSUBSCRIBE). On a Cluster, a plain PUBLISH is broadcast to every node; a sharded one stays on the
 * shard of its channel, which shares the lock key's hash tag.
 */
export type PubSubKind = 'plain' | 'sharded';

/** The kind found for each Cluster client: sharded when the servers have SPUBLISH (Redis >= 7). */
const kinds = new WeakMap<RedisClient, PubSubKind | Promise<PubSubKind>>();

/**
 * @internal A kind a client carries under this registered symbol is taken as found, whatever the
 * servers support: how the library's own tests and benchmarks make a Cluster announce on plain pub/sub.
 */
const KIND_OF_CLIENT = Symbol.for('nestjs-distributed-lock.pub-sub-kind');

/**
 * @internal The kind for `client`: plain on a single node or Sentinel (nothing is broadcast there),
 * and on a Cluster sharded when both the servers (`COMMAND INFO SPUBLISH`, asked once and kept) and
 * the ioredis version (which must route SSUBSCRIBE to the channel's shard) support it.
 * Rejects when the question got no answer (the next call asks again).
 */
export function pubSubKindOf(client: RedisClient): PubSubKind | Promise<PubSubKind> {
  if (!client.isCluster) return 'plain';
  let kind = kinds.get(client);
  if (kind === undefined) {
    kind = (client as { [KIND_OF_CLIENT]?: PubSubKind })[KIND_OF_CLIENT] ?? detect(client);
    kinds.set(client, kind);
  }
  return kind;
}

/** @internal A script that announces a release, in one variant per kind (`redis.call(publish, channel, message)`). */
type PublishingScript = Readonly<Record<PubSubKind, LuaScript>>;

/** @internal `source(publish)` with `publish` the command that announces: PUBLISH or SPUBLISH. */
export function publishingScript(source: (publish: string) => string): PublishingScript {
  return { plain: luaScript(source('PUBLISH')), sharded: luaScript(source('SPUBLISH')) };
}

/** @internal `runScript` with the variant of `script` that `client` announces with; in this tick once the kind is known. */
export function runPublishingScript(
  client: RedisClient,
  script: PublishingScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const kind = pubSubKindOf(client);
  if (typeof kind === 'string') return runScript(client, script[kind], keys, args);
  // Unanswered, the script most likely fails as well; if not, a plain release still frees the key.
  return kind.then(
    (known) => runScript(client, script[known], keys, args),
    () => runScript(client, script.plain, keys, args),
  );
}

/** @internal `sendScript` (run-script.ts) with the variant of `script` that `client` announces with; `runPublishingScript` without the fallback. */
export function sendPublishingScript(
  client: RedisClient,
  script: PublishingScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const kind = pubSubKindOf(client);
  if (typeof kind === 'string') return sendScript(client, script[kind], keys, args);
  // The kind is being found out (a Cluster's first release): the fallback is included.
  return runPublishingScript(client, script, keys, args);
}

/** @internal `afterScriptFailed` (run-script.ts) for a `sendPublishingScript` that rejected with `error`. */
export function afterPublishingScriptFailed(
  error: unknown,
  client: RedisClient,
  script: PublishingScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const kind = pubSubKindOf(client);
  return afterScriptFailed(error, client, script[typeof kind === 'string' ? kind : 'plain'], keys, args);
}

async function detect(client: RedisClient): Promise<PubSubKind> {
  let kind: PubSubKind;
  try {
    kind =
      routesShardedSubscriptions(client) && hasSpublish(await client.call!('COMMAND', 'INFO', 'SPUBLISH'))
        ? 'sharded'
        : 'plain';
  } catch (error) {
    // Not answered: ask again next time. Refused (COMMAND not allowed by an ACL): stay plain.
    if (!isServerReply(error)) {
      kinds.delete(client);
      throw error;
    }
    kind = 'plain';
  }
  kinds.set(client, kind);
  return kind;
}

/** COMMAND INFO answers nil for a command the server does not know. */
function hasSpublish(reply: unknown): boolean {
  return Array.isArray(reply) && Array.isArray(reply[0]);
}

/**
 * ioredis >= 5.9 (`shardedSubscribers` among a Cluster's options, the version checked) has what
 * ShardSubscriptions needs. It treats SSUBSCRIBE's channels as keys: a client `keyPrefix` would be
 * put in front of them and not of the channel a script publishes on, so such a client stays plain.
 */
function routesShardedSubscriptions(client: RedisClient): boolean {
  const options = client.options as { shardedSubscribers?: unknown; keyPrefix?: unknown } | undefined;
  return (
    typeof client.ssubscribe === 'function' &&
    typeof client.call === 'function' &&
    ShardSubscriptions.canServe(client) &&
    options !== undefined &&
    'shardedSubscribers' in options &&
    !options.keyPrefix
  );
}

function isServerReply(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
