import { join } from 'node:path';
import { freePort } from './free-port.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

/** One member of an {@link EtcdCluster}. */
export class EtcdMember extends ServerProcess {
  constructor(
    readonly memberName: string,
    readonly clientPort: number,
    readonly peerPort: number,
    readonly dataDir: string,
    initialCluster: string,
    token: string,
  ) {
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const clientUrl = `http://127.0.0.1:${clientPort}`;
    super(`etcd-${memberName}`, requireBinary('/usr/bin/etcd', 'etcd-server'), [
      '--name',
      memberName,
      '--data-dir',
      join(dataDir, 'data'),
      '--listen-client-urls',
      clientUrl,
      '--advertise-client-urls',
      clientUrl,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      initialCluster,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      token,
      '--logger',
      'zap',
      '--log-outputs',
      join(dataDir, 'etcd.log'),
      // etcd 3.5's default, off in 3.4: a member back from an isolation does not force an election by the terms it ran up while cut off.
      '--pre-vote',
    ]);
  }

  get url(): string {
    return `http://127.0.0.1:${this.clientPort}`;
  }

  /** This member's id and the leader's, as it sees them (maintenance Status). */
  async status(): Promise<{ member: string; leader: string; appliedIndex: number }> {
    const response = await fetch(`${this.url}/v3/maintenance/status`, {
      method: 'POST',
      body: '{}',
      signal: AbortSignal.timeout(1_000),
    });
    const body = (await response.json()) as {
      header: { member_id: string };
      leader: string;
      raftAppliedIndex?: string;
    };
    return { member: body.header.member_id, leader: body.leader, appliedIndex: Number(body.raftAppliedIndex ?? 0) };
  }
}

/** A 3-member etcd 3.4 cluster on 127.0.0.1 (each member with its own client and peer ports), data in temp dirs. */
export class EtcdCluster {
  private constructor(readonly members: readonly EtcdMember[]) {}

  static async start(size = 3): Promise<EtcdCluster> {
    const ports: { name: string; client: number; peer: number }[] = [];
    for (let i = 0; i < size; i++) ports.push({ name: `m${i + 1}`, client: await freePort(), peer: await freePort() });
    const initial = ports.map((p) => `${p.name}=http://127.0.0.1:${p.peer}`).join(',');
    const cluster = new EtcdCluster(
      ports.map((p) => new EtcdMember(p.name, p.client, p.peer, tempDir('etcd'), initial, `ndl-${ports[0].client}`)),
    );
    for (const member of cluster.members) member.start();
    await waitUntil(
      'a 3-member etcd cluster with a leader',
      async () => (await Promise.all(cluster.members.map((m) => m.status()))).every((s) => s.leader !== '0'),
      60_000,
      200,
    );
    return cluster;
  }

  /**
   * Waits until every member answers, all name the same leader, and their applied raft indexes are
   * within `lag` of each other: a member healed from an isolation has caught up.
   */
  async settled(lag = 100, timeoutMs = 30_000): Promise<void> {
    await waitUntil(
      'every etcd member to follow one leader, caught up',
      async () => {
        const statuses = await Promise.all(this.members.map((m) => m.status().catch(() => undefined)));
        if (statuses.some((s) => s === undefined || s.leader === '0' || s.leader !== statuses[0]!.leader)) return false;
        const applied = statuses.map((s) => s!.appliedIndex);
        return Math.max(...applied) - Math.min(...applied) <= lag;
      },
      timeoutMs,
      100,
    );
  }

  /** The member that leads, as the members that answer see it. */
  async leader(): Promise<EtcdMember> {
    for (const member of this.members) {
      const status = await member.status().catch(() => undefined);
      if (!status || status.leader === '0') continue;
      for (const other of this.members)
        if ((await other.status().catch(() => undefined))?.member === status.leader) return other;
    }
    throw new Error('the etcd cluster has no leader right now');
  }

  async destroy(): Promise<void> {
    await Promise.all(
      this.members.map(async (member) => {
        await member.stop();
        removeDir(member.dataDir);
      }),
    );
  }
}
