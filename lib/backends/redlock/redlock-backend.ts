import { LockBackendError } from '../../errors.js';
import { withinMs } from '../../util/time-limit.js';
import { joinAddresses, redisAddress } from '../driver-address.js';
import type { RedlockBackendOptions } from '../backend-options.js';
import type { BackendCapabilities, ClaimRequest, LockBackend, LockClaim } from '../../engine/lock-backend.js';
import { describeFailures } from './node-call.js';
import { runRound, tally } from './quorum-round.js';
import { RedlockClaim, type RedlockContext } from './redlock-claim.js';
import { RedlockInspection } from './redlock-inspection.js';
import { firstConnections, openMasters, type RedlockMaster } from './redlock-masters.js';
import { resolveRedlockSettings, type RedlockSettings } from './redlock-options.js';

/** How long creating the backend waits for the masters to connect (it never fails on it). */
const FIRST_CONNECT_WAIT_MS = 2_000;
/** How long `ping()` waits for each master at least: a health check is not in a hurry, and must not flap on a loaded machine. */
const PING_TIMEOUT_MS = 1_000;
/** How long `close()` lets QUIT flush before it drops a connection. */
const QUIT_TIMEOUT_MS = 2_000;

/**
 * Redlock over N independent Redis masters: a lock is held when a quorum of masters took it
 * within its validity (lease - elapsed - drift). No fencing tokens: see docs/backends/redlock.md.
 */
export class RedlockBackend implements LockBackend {
  readonly name = 'redlock';
  readonly inspection: RedlockInspection;
  /** minHoldMs: a released key is kept for the rest of it on each master (owner-checked PEXPIRE). No fences (quorum writes on independent masters). */
  readonly capabilities: BackendCapabilities = { minHold: true };
  private readonly context: RedlockContext;
  /** The masters' addresses, in the order of the options, for error messages. */
  readonly address: string | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly masters: readonly RedlockMaster[],
    readonly settings: RedlockSettings,
  ) {
    this.address = joinAddresses(masters.map((master) => redisAddress(master.client)));
    this.context = { name: this.name, masters, settings };
    this.inspection = new RedlockInspection(masters, settings.quorum);
  }

  /** The connection state of each master's client, in the order of the options (ioredis `status`: `'ready'`, `'reconnecting'`, ...). */
  get connectionStates(): string[] {
    return this.masters.map((master) => master.client.status);
  }

  claim(request: ClaimRequest): LockClaim {
    return new RedlockClaim(this.context, request);
  }

  /** Resolves when a quorum of masters answers PING (each within 1 s, or `nodeTimeoutMs` if longer). */
  async ping(): Promise<void> {
    const timeoutMs = Math.max(PING_TIMEOUT_MS, this.settings.nodeTimeoutMs ?? 0);
    const replies = await runRound(
      this.masters,
      (master) => master.client.ping(),
      timeoutMs,
      (partial) => tally(partial, () => true).yes >= this.settings.quorum,
    );
    const answered = tally(replies, () => true).yes;
    if (answered >= this.settings.quorum) return;
    throw new LockBackendError(
      this.name,
      `ping: ${answered} of ${this.masters.length} masters answered, ${this.settings.quorum} needed (${describeFailures(replies, this.masters)})`,
    );
  }

  /** Closes the subscriber connections, and the clients this backend created. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    await Promise.all(
      this.masters.map(async ({ client, owned, listener }) => {
        await listener.close();
        if (!owned) return;
        if (client.status === 'ready') await withinMs(client.quit(), QUIT_TIMEOUT_MS).catch(() => undefined);
        if (client.status !== 'end') client.disconnect();
      }),
    );
  }
}

/** Builds the redlock backend from module options. Throws InvalidLockArgumentError on bad options. */
export async function createRedlockBackend(options: RedlockBackendOptions): Promise<LockBackend> {
  const settings = resolveRedlockSettings(options);
  const masters = await openMasters(options);
  await firstConnections(masters, FIRST_CONNECT_WAIT_MS);
  return new RedlockBackend(masters, settings);
}
