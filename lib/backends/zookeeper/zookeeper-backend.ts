import type { ZookeeperBackendOptions } from '../backend-options.js';
import type { ClaimRequest, LockBackend, LockClaim, BackendCapabilities } from '../../engine/lock-backend.js';
import { loadZookeeperDriver, type ZkDriver } from './zk-driver.js';
import { explainAccessError } from './zk-access-error.js';
import { ZookeeperInspection } from './zk-inspection.js';
import { ZkSessions } from './zk-sessions.js';
import { ZookeeperClaim } from './zookeeper-claim.js';
import { resolveZookeeperOptions } from './zookeeper-options.js';

/**
 * Locks as ephemeral sequential znodes (the ZooKeeper lock recipe), one session per backend shared
 * by all its locks. Liveness is the session: a lock lives until it is released or the session
 * ends (expiry, close), and each holder is told when that happens. The fence is the lock node's
 * creation zxid.
 */
export class ZookeeperBackend implements LockBackend {
  readonly name = 'zookeeper';
  /** Waiters always queue in arrival order, so every lock is fair. */
  readonly capabilities: BackendCapabilities = { read: true, fair: true, fenced: true };
  readonly inspection: ZookeeperInspection;
  private readonly sessions: ZkSessions;
  /** The servers of the connection string (without its chroot), for error messages. */
  readonly address: string;

  constructor(driver: ZkDriver, options: ZookeeperBackendOptions) {
    const resolved = resolveZookeeperOptions(options);
    this.address = resolved.connectionString.split('/')[0].split(',').join(', ');
    this.sessions = new ZkSessions(driver, resolved);
    this.inspection = new ZookeeperInspection(this.sessions);
  }

  claim(request: ClaimRequest): LockClaim {
    return new ZookeeperClaim(this.sessions, request);
  }

  async ping(): Promise<void> {
    const session = await this.sessions.get();
    await session.children('/').catch((error: unknown) => {
      throw explainAccessError(error, session, 'reading /');
    });
  }

  /** @internal The current session's id and password, for tests that expire it from outside. */
  sessionCredentials(): { readonly sessionId: Buffer; readonly sessionPassword: Buffer } | undefined {
    return this.sessions.peek()?.credentials;
  }

  /** @internal The client port of the ensemble member the session is connected to, for tests that stop that member. */
  connectedServerPort(): number | undefined {
    return this.sessions.peek()?.serverPort;
  }

  /** Ends the session: the server deletes every lock node it still owns. */
  close(): Promise<void> {
    return this.sessions.close();
  }
}

/** Builds the `zookeeper` backend. Connects lazily, on the first lock operation. */
export async function createZookeeperBackend(options: ZookeeperBackendOptions): Promise<LockBackend> {
  resolveZookeeperOptions(options);
  return new ZookeeperBackend(await loadZookeeperDriver(), options);
}
