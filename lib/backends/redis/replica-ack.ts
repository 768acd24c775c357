import { checkKnownFields } from '../../util/known-fields.js';
import { describe } from '../../engine/lock-options.js';
import { InvalidLockArgumentError, LockBackendError } from '../../errors.js';
import type { RedisReplicasOptions } from '../backend-options.js';
import type { RedisClient } from './redis-client.js';

/** @internal The checked `replicas` option: how many replicas must acknowledge, within how long. */
export interface ReplicaAck {
  readonly min: number;
  readonly timeoutMs: number;
  /** WAITAOF (replicas fsynced their AOF) instead of WAIT. */
  readonly aof: boolean;
}

/** Longest accepted `replicas.timeoutMs`: meanwhile the connection serves nobody else, so anything near a minute is a mistake. */
const MAX_REPLICA_TIMEOUT_MS = 60_000;

const FIELDS = ['min', 'timeoutMs', 'aof'];

/** @internal Validates the `replicas` option of the redis backend (InvalidLockArgumentError). */
export function resolveReplicaAck(value: RedisReplicasOptions | undefined): ReplicaAck | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw invalid(`\`replicas\` must be an object { min, timeoutMs, aof? }, got ${describe(value)}`);
  checkKnownFields(value, FIELDS, 'redis backend: `replicas`');
  const { min, timeoutMs, aof = false } = value;
  if (!isWholeIn(min, 1, 1_000))
    throw invalid(`\`replicas.min\` must be a whole number of replicas from 1, got ${describe(min)}`);
  if (!isWholeIn(timeoutMs, 1, MAX_REPLICA_TIMEOUT_MS))
    throw invalid(
      `\`replicas.timeoutMs\` must be a whole number of ms from 1 to ${MAX_REPLICA_TIMEOUT_MS}, got ${describe(timeoutMs)}`,
    );
  if (typeof aof !== 'boolean') throw invalid(`\`replicas.aof\` must be a boolean, got ${describe(aof)}`);
  return { min, timeoutMs, aof };
}

/**
 * @internal What a write left for its owner, read back right after the WAIT on the same connection:
 * should the connection have moved to another master in between (a failover, a reconnection), a
 * WAIT there would vouch for nothing, but the write is then missing there too.
 */
export interface HeldEntry {
  readonly key: string;
  readonly owner: string;
  /** `'value'`: `key` holds the owner id (a lock). `'member'`: the owner is a member of the sorted set `key` (a reader, a permit). */
  readonly kind: 'value' | 'member';
}

interface Batch {
  readonly entries: HeldEntry[];
  readonly settles: ((error: LockBackendError | undefined) => void)[];
}

/**
 * @internal The replica acknowledgements of one backend. On a single connection (a node, a Sentinel
 * master) one WAIT covers every write sent before it, so the callers that ask in the same tick
 * share one: 64 concurrent acquisitions wait for the replicas once, not 64 times in a row (a WAIT
 * holds up the commands behind it on the connection). On a Cluster each call sends its own, to the
 * key's master.
 */
export class ReplicaAcknowledger {
  private batch: Batch | undefined;

  constructor(
    private readonly client: RedisClient,
    readonly ack: ReplicaAck,
  ) {}

  /**
   * Resolves once enough replicas have every write whose reply this process has seen and `entry`
   * is still on the master; rejects with LockBackendError otherwise.
   */
  confirm(entry: HeldEntry): Promise<void> {
    let batch = this.batch;
    if (!batch || this.client.isCluster) {
      const fresh: Batch = { entries: [], settles: [] };
      batch = fresh;
      if (!this.client.isCluster) this.batch = fresh;
      process.nextTick(() => {
        if (this.batch === fresh) this.batch = undefined;
        awaitReplicas(this.client, fresh.entries, this.ack).then(
          (errors) => fresh.settles.forEach((settle, i) => settle(errors[i])),
          (error: LockBackendError) => fresh.settles.forEach((settle) => settle(error)),
        );
      });
    }
    batch.entries.push(entry);
    return new Promise((resolve, reject) => batch.settles.push((error) => (error ? reject(error) : resolve())));
  }
}

/**
 * @internal Waits until `ack.min` replicas acknowledged every write this connection sent so far
 * (WAIT / WAITAOF), then reads each entry back: one pipeline, which the entries' keys route to
 * their master on a Cluster client (they share a slot there: one entry per call). Rejects with
 * LockBackendError when fewer replicas acknowledged within `ack.timeoutMs`; resolves, per entry,
 * a LockBackendError when it is no longer on the master.
 */
async function awaitReplicas(
  client: RedisClient,
  entries: readonly HeldEntry[],
  ack: ReplicaAck,
): Promise<(LockBackendError | undefined)[]> {
  if (!client.pipeline) throw new LockBackendError('redis', '`replicas` needs an ioredis client with pipeline()');
  const pipeline = client.pipeline();
  if (ack.aof) pipeline.call('waitaof', 0, ack.min, ack.timeoutMs);
  else pipeline.call('wait', ack.min, ack.timeoutMs);
  for (const { key, owner, kind } of entries) {
    if (kind === 'value') pipeline.call('get', key);
    else pipeline.call('zscore', key, owner);
  }
  let results: [Error | null, unknown][];
  try {
    results = (await pipeline.exec()) ?? [];
  } catch (error) {
    throw new LockBackendError('redis', `waiting for replicas failed: ${(error as Error).message}`, { cause: error });
  }
  const [error, reply] = results[0] ?? [new Error('no reply to WAIT'), undefined];
  if (error) throw new LockBackendError('redis', waitFailed(error, ack), { cause: error });
  const acknowledged = ack.aof ? Number((reply as unknown[])[1]) : Number(reply);
  if (!(acknowledged >= ack.min)) {
    throw new LockBackendError(
      'redis',
      `only ${acknowledged} of the ${ack.min} replicas required by \`replicas.min\` acknowledged the write within ${ack.timeoutMs} ms`,
    );
  }
  return entries.map(({ owner, kind }, i) => {
    const [readError, value] = results[i + 1] ?? [new Error('no reply'), undefined];
    const held = !readError && (kind === 'value' ? value === owner : value !== null && value !== undefined);
    return held
      ? undefined
      : new LockBackendError(
          'redis',
          'the write the replicas acknowledged is not on the master any more (a failover or a reconnection in between, or the lease ran out)',
        );
  });
}

/**
 * @internal An acquisition just made counts once the replicas acknowledged it; otherwise `undo`
 * (an owner-checked release) runs, and this rejects with the LockBackendError all the same.
 */
export async function acknowledgedOrUndone(
  replicas: ReplicaAcknowledger,
  entry: HeldEntry,
  undo: () => Promise<unknown>,
): Promise<void> {
  try {
    await replicas.confirm(entry);
  } catch (error) {
    await undo();
    throw error;
  }
}

/** @internal A renewal's answer, once the replicas acknowledged it when it extended the lease; rejects (a failed renewal) when they did not. */
export async function renewedOnReplicas(
  replicas: ReplicaAcknowledger,
  entry: HeldEntry,
  extended: Promise<boolean>,
): Promise<boolean> {
  if (!(await extended)) return false;
  await replicas.confirm(entry);
  return true;
}

function waitFailed(error: Error, ack: ReplicaAck): string {
  if (ack.aof && /unknown command/i.test(error.message))
    return `\`replicas.aof\` needs Redis 7.2 or later (WAITAOF): ${error.message}`;
  return `waiting for replicas failed: ${error.message}`;
}

function isWholeIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function invalid(message: string): InvalidLockArgumentError {
  return new InvalidLockArgumentError(`redis backend: ${message}`);
}
