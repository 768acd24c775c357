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
export const MAX_REPLICA_TIMEOUT_MS = 60_000;

const FIELDS = ['min', 'timeoutMs', 'aof'];

/** @internal Validates the `replicas` option of the redis backend (InvalidLockArgumentError). */
export function resolveReplicaAck(value: RedisReplicasOptions | undefined): ReplicaAck | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw invalid(`\`replicas\` must be an object { min, timeoutMs, aof? }, got ${describe(value)}`);
  const unknown = Object.keys(value).find((name) => !FIELDS.includes(name));
  if (unknown !== undefined) throw invalid(`unknown option "replicas.${unknown}" (accepted: ${FIELDS.join(', ')})`);
  const { min, timeoutMs, aof = false } = value;
  if (!isWholeIn(min, 1, 1_000)) throw invalid(`\`replicas.min\` must be a whole number of replicas from 1, got ${describe(min)}`);
  if (!isWholeIn(timeoutMs, 1, MAX_REPLICA_TIMEOUT_MS)) throw invalid(`\`replicas.timeoutMs\` must be a whole number of ms from 1 to ${MAX_REPLICA_TIMEOUT_MS}, got ${describe(timeoutMs)}`);
  if (typeof aof !== 'boolean') throw invalid(`\`replicas.aof\` must be a boolean, got ${describe(aof)}`);
  return { min, timeoutMs, aof };
}

/**
 * @internal Waits until `ack.min` replicas acknowledged every write this connection sent so far
 * (WAIT / WAITAOF), on the master that serves `key`: the command goes in one pipeline with a read
 * of the key, which routes it there on a Cluster client. Rejects with LockBackendError when fewer
 * acknowledged within `ack.timeoutMs`.
 */
export async function awaitReplicas(client: RedisClient, key: string, ack: ReplicaAck): Promise<void> {
  if (!client.pipeline) throw new LockBackendError('redis', '`replicas` needs an ioredis client with pipeline()');
  const pipeline = client.pipeline().call('exists', key);
  if (ack.aof) pipeline.call('waitaof', 0, ack.min, ack.timeoutMs);
  else pipeline.call('wait', ack.min, ack.timeoutMs);
  const results = (await pipeline.exec()) ?? [];
  const [error, reply] = results[1] ?? [new Error('no reply to WAIT'), undefined];
  if (error) throw new LockBackendError('redis', waitFailed(error, ack), { cause: error });
  const acknowledged = ack.aof ? Number((reply as unknown[])[1]) : Number(reply);
  if (!(acknowledged >= ack.min)) {
    throw new LockBackendError('redis', `only ${acknowledged} of the ${ack.min} replicas required by \`replicas.min\` acknowledged the write within ${ack.timeoutMs} ms`);
  }
}

/**
 * @internal An acquisition just made counts once the replicas acknowledged it; otherwise `undo`
 * (an owner-checked release) runs, and this rejects with the LockBackendError all the same.
 */
export async function acknowledgedOrUndone(client: RedisClient, key: string, ack: ReplicaAck, undo: () => Promise<unknown>): Promise<void> {
  try {
    await awaitReplicas(client, key, ack);
  } catch (error) {
    await undo();
    throw error;
  }
}

/** @internal A renewal's answer, once the replicas acknowledged it when it extended the lease; rejects (a failed renewal) when they did not. */
export async function renewedOnReplicas(client: RedisClient, key: string, ack: ReplicaAck | undefined, extended: Promise<boolean>): Promise<boolean> {
  if (!(await extended) || !ack) return extended;
  await awaitReplicas(client, key, ack);
  return true;
}

function waitFailed(error: Error, ack: ReplicaAck): string {
  if (ack.aof && /unknown command/i.test(error.message)) return `\`replicas.aof\` needs Redis 7.2 or later (WAITAOF): ${error.message}`;
  return `waiting for replicas failed: ${error.message}`;
}

function isWholeIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function invalid(message: string): InvalidLockArgumentError {
  return new InvalidLockArgumentError(`redis backend: ${message}`);
}
