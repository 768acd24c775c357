import type { Etcd3, IOptions } from 'etcd3';
import { joinAddresses, urlAddress } from '../driver-address.js';
import { InvalidLockArgumentError } from '../../errors.js';
import type { EtcdBackendOptions } from '../backend-options.js';
import type { ClaimRequest, LockBackend, LockClaim, BackendCapabilities } from '../../engine/lock-backend.js';
import { loadOptional } from '../../util/load-optional.js';
import { EtcdClaim } from './etcd-claim.js';
import { resolveEtcdCredentials } from './etcd-credentials.js';
import { attemptTimeoutMs, lockFaultHandling } from './etcd-fault-handling.js';
import { EtcdInspection } from './etcd-inspection.js';
import { MemberProbes } from './etcd-member-probe.js';
import { LeaseKeeper } from './etcd-lease.js';
import { resolveEtcdOptions } from './etcd-options.js';
import type { EtcdContext } from './etcd-queue-claim.js';
import { EtcdSemaphoreClaim } from './etcd-semaphore-claim.js';

type EtcdDriver = typeof import('etcd3');

/** The member probes beside the client: asked to check the members when a watch went silent, and stopped with the backend. */
interface MemberChecks {
  silentWatch(): Promise<void>;
  stop(): void;
}

/**
 * Locks on etcd v3: every claim is a key bound to the backend's one lease, and its create
 * revision is both its place in the queue and its fence. See docs/backends/etcd.md.
 */
class EtcdBackend implements LockBackend {
  readonly name = 'etcd';
  /** Waiters always queue in arrival order, so every lock is fair. */
  readonly capabilities: BackendCapabilities = { read: true, fair: true, semaphore: true, minHold: true, fenced: true };
  readonly inspection: EtcdInspection;
  private readonly context: EtcdContext;
  /** The endpoints the client was given (host:port only), for error messages. */
  readonly address: string | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly client: Etcd3,
    leases: LeaseKeeper,
    errors: Pick<EtcdContext, 'isLeaseNotFound' | 'isUnanswered'>,
    hosts: readonly string[] = [],
    /** What runs beside the client: the member probes. */
    private readonly aside: MemberChecks = { silentWatch: () => Promise.resolve(), stop() {} },
  ) {
    this.address = joinAddresses(hosts.map(urlAddress));
    // A member that hangs keeps the watch stream on it silent: with several members, waiters look again after one attempt's share of the request timeout.
    const fallbackWaitMs = hosts.length > 1 ? leases.attemptMs : Math.max(1_000, leases.ttlMs);
    this.context = {
      client,
      leases,
      fallbackWaitMs,
      silentWatch: () => aside.silentWatch(),
      isLeaseNotFound: errors.isLeaseNotFound,
      isUnanswered: errors.isUnanswered,
    };
    this.inspection = new EtcdInspection(client);
  }

  claim(request: ClaimRequest): LockClaim {
    if (request.permits !== undefined) return new EtcdSemaphoreClaim(this.context, request);
    return new EtcdClaim(this.context, request);
  }

  async ping(): Promise<void> {
    await this.client.maintenance.status();
  }

  /** Revokes the lease (every key left on it vanishes) and closes the client. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.context.leases.close().finally(() => {
      this.aside.stop();
      this.client.close();
    });
    return this.closing;
  }
}

/**
 * Creates the etcd backend and its client (closed again by `close()`). The lease is granted on
 * the first acquisition, so an unreachable etcd shows up as LockBackendError there, not here.
 */
export async function createEtcdBackend(options: EtcdBackendOptions): Promise<LockBackend> {
  const { urls: hosts, leaseTtlSeconds, requestTimeoutMs } = resolveEtcdOptions(options);
  const credentials = resolveEtcdCredentials(options, hosts);
  const loaded = await loadOptional<EtcdDriver & { default?: EtcdDriver }>('etcd3', "The 'etcd' backend");
  // etcd3 is CommonJS: its exports may sit on `default` when imported from ESM.
  const driver = loaded.Etcd3 ? loaded : loaded.default!;
  const isUnanswered = (error: unknown) =>
    error instanceof driver.GRPCUnavailableError || error instanceof driver.GRPCDeadlineExceededError;
  const connection: IOptions = {
    hosts,
    ...(credentials as Pick<IOptions, 'auth' | 'credentials'>),
    dialTimeout: requestTimeoutMs,
    // gRPC waits up to 2 minutes between reconnection attempts by default, failing every call meanwhile:
    // a lock client must be back within a second of etcd, well inside any lease.
    grpcOptions: { 'grpc.initial_reconnect_backoff_ms': 100, 'grpc.max_reconnect_backoff_ms': 1_000 },
  };
  const probes = new MemberProbes((options) => new driver.Etcd3(options), connection, isUnanswered);
  // A deadline on every plain call (a share of it per member tried), so a hung member reads as unreachable; streams stay open.
  const {
    close: stopFaultHandling,
    checkMembers,
    ...faultHandling
  } = lockFaultHandling({
    hostCount: hosts.length,
    requestTimeoutMs,
    isUnanswered,
    probe: probes.probe,
  });
  let client: Etcd3;
  try {
    client = new driver.Etcd3({ ...connection, ...faultHandling });
  } catch (error) {
    throw new InvalidLockArgumentError(`etcd backend: ${(error as Error).message}`, { cause: error });
  }
  const isLeaseNotFound = (error: unknown) => error instanceof driver.EtcdLeaseInvalidError;
  return new EtcdBackend(
    client,
    new LeaseKeeper(
      client,
      leaseTtlSeconds,
      requestTimeoutMs,
      attemptTimeoutMs(requestTimeoutMs, hosts.length),
      isUnanswered,
    ),
    { isLeaseNotFound, isUnanswered },
    hosts,
    { silentWatch: checkMembers, stop: () => (stopFaultHandling(), probes.close()) },
  );
}
