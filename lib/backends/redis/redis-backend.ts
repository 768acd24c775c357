import { monotonicNow } from '../../util/clock.js';
import { checkDriftFactor, DEFAULT_DRIFT_FACTOR } from '../drift.js';
import { InFlight } from '../../util/in-flight.js';
import { withinMs } from '../../util/time-limit.js';
import { LockBackendError } from '../../errors.js';
import type { RedisBackendOptions } from '../backend-options.js';
import { DEFAULT_IDLE_KEY_TTL_MS, resolveIdleKeyTtlMs } from '../idle-key-ttl.js';
import type { BackendCapabilities, ClaimRequest, LockBackend, LockClaim } from '../../engine/lock-backend.js';
import { QueueHeartbeat } from './queue-heartbeat.js';
import { RedisClaim, type RedisClaimContext } from './redis-claim.js';
import type { RedisClient } from './redis-client.js';
import { COMMAND_BOUND_MS, openRedisConnection } from './redis-connection.js';
import { watchStuckConnection } from './stuck-connection.js';
import { RedisInspection } from './redis-inspection.js';
import { redisAddress } from '../driver-address.js';
import { atAddress } from '../../util/backend-error.js';
import { ReleaseListener } from './release-listener.js';
import { ReplicaAcknowledger, resolveReplicaAck, type ReplicaAck } from './replica-ack.js';
import { RedisSemaphoreClaim } from './semaphore-claim.js';

/** How long `close()` lets commands in flight settle and QUIT flush, in all, before it drops the connection. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Locks on one Redis deployment (a single node, a Sentinel-managed primary, or a Cluster): one
 * Lua script per operation, a fence counter per key, and waiting on pub/sub release messages.
 * Read/write locks and fair (FIFO) claims wait in a per-key queue (docs/backends/redis.md).
 */
export class RedisBackend implements LockBackend {
  readonly name = 'redis';
  readonly capabilities: BackendCapabilities = { read: true, fair: true, semaphore: true, minHold: true, fenced: true };
  readonly inspection: RedisInspection;
  /** The server (or sentinels, or cluster startup nodes) the client was given, for error messages. */
  readonly address: string | undefined;
  private readonly listener: ReleaseListener;
  private readonly heartbeat: QueueHeartbeat;
  private readonly claims: RedisClaimContext;
  /** Commands the engine does not wait for (queue heartbeats, renewals); the engine settles its acquisitions and releases before it closes this. */
  private readonly inFlight = new InFlight();
  private closing: Promise<void> | undefined;
  /** Stops replacing a created client's stuck connection (none for a client of yours). */
  private readonly stopWatch: () => void;

  constructor(
    private readonly client: RedisClient,
    private readonly ownsClient: boolean,
    /** How long a key's fence counter outlives its last lease (see docs/backends/redis.md, Footprint). */
    idleKeyTtlMs = DEFAULT_IDLE_KEY_TTL_MS,
    /** Replicas that must acknowledge acquisitions and renewals (see docs/backends/redis.md, Replicas and failover). */
    replicas?: ReplicaAck,
    /** Clock drift allowance as a share of the lease (the `driftFactor` option). */
    driftFactor = DEFAULT_DRIFT_FACTOR,
  ) {
    this.address = redisAddress(client);
    this.listener = new ReleaseListener(client);
    this.inspection = new RedisInspection(client);
    const track = <T>(command: Promise<T>) => this.inFlight.track(command);
    this.heartbeat = new QueueHeartbeat(client, track);
    this.stopWatch = ownsClient
      ? // A WAIT for replicas and the commands queued behind it on the connection take up to its timeout longer.
        watchStuckConnection(client, COMMAND_BOUND_MS + (replicas?.timeoutMs ?? 0), () => this.listener.reconnect())
      : () => undefined;
    this.claims = {
      client,
      listener: this.listener,
      heartbeat: this.heartbeat,
      track,
      idleKeyTtlMs,
      replicas: replicas && new ReplicaAcknowledger(client, replicas),
      driftFactor,
    };
  }

  claim(request: ClaimRequest): LockClaim {
    if (request.permits !== undefined) return new RedisSemaphoreClaim(this.claims, request);
    return new RedisClaim(this.claims, request);
  }

  async ping(): Promise<void> {
    try {
      await this.client.ping();
    } catch (error) {
      throw new LockBackendError(
        this.name,
        atAddress(`ping failed: ${error instanceof Error ? error.message : String(error)}`, this.address),
        { cause: error },
      );
    }
  }

  /** Closes the subscriber connection, and the client too if this backend created it. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    this.stopWatch();
    this.heartbeat.close();
    await this.listener.close();
    if (!this.ownsClient) return;
    // ioredis' disconnect() while it reconnects leaves queued commands pending (redis/ioredis#2169): let ours settle first.
    const giveUpAt = monotonicNow() + CLOSE_GRACE_MS;
    await withinMs(this.inFlight.settled(), giveUpAt - monotonicNow()).catch(() => undefined);
    if (
      this.client.status === 'ready' &&
      (await withinMs(this.client.quit(), giveUpAt - monotonicNow()).then(
        () => true,
        () => false,
      ))
    )
      return;
    this.client.disconnect();
  }
}

/** Builds the redis backend from module options. Throws InvalidLockArgumentError on bad options. */
export async function createRedisBackend(options: RedisBackendOptions): Promise<LockBackend> {
  const idleKeyTtlMs = resolveIdleKeyTtlMs(options.idleKeyTtlMs, 'redis');
  const replicas = resolveReplicaAck(options.replicas);
  const driftFactor = checkDriftFactor('redis', options.driftFactor);
  const { client, owned } = await openRedisConnection(options);
  return new RedisBackend(client, owned, idleKeyTtlMs, replicas, driftFactor);
}
