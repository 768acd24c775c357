import type { Etcd3, IOptions } from 'etcd3';
import { OVERDUE, withinMs } from '../../util/time-limit.js';
import type { MemberProbe } from './etcd-member-health.js';

/** The key a probe reads: any key does, the read only has to go through the leader. */
const PROBE_KEY = 'nestjs-distributed-lock/probe';

/** One attempt, no retries, no breaker: a probe asks one member once. */
const ONCE = {
  execute: (call: (context: { signal: AbortSignal; attempt: number }) => unknown) =>
    call({ signal: new AbortController().signal, attempt: 0 }),
};

/**
 * @internal
 * Probes for the members of one cluster: a client of its own per member (made on the member's first
 * probe, with the main client's connection options and credentials), reading one key linearizably. An answer
 * that refuses the read (no permission on the key) counts: the member went through its leader to give it.
 */
export class MemberProbes {
  private readonly clients = new Map<string, Etcd3>();
  private closed = false;

  constructor(
    private readonly newClient: (options: IOptions) => Etcd3,
    private readonly options: IOptions,
    private readonly isUnanswered: (error: unknown) => boolean,
  ) {}

  readonly probe: MemberProbe = async (host, deadlineMs) => {
    if (this.closed) throw new Error('the etcd backend is closed');
    let client = this.clients.get(host);
    if (!client) {
      client = this.newClient({
        ...this.options,
        hosts: [host],
        faultHandling: { host: () => ONCE as never, global: ONCE as never },
      });
      this.clients.set(host, client);
    }
    const read = client
      .get(PROBE_KEY)
      .options({ deadline: Date.now() + deadlineMs })
      .exec();
    try {
      // The deadline covers the read, not the authentication before it (with credentials): bound both.
      await withinMs(read, deadlineMs + 100, { keepAlive: false });
    } catch (error) {
      if (error === OVERDUE || this.isUnanswered(error)) throw error;
    }
  };

  close(): void {
    this.closed = true;
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}
