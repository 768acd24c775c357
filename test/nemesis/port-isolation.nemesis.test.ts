import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createConnection, type Socket } from 'node:net';
import { EtcdCluster, type EtcdMember } from '../harness/etcd-cluster.js';
import { waitUntil } from '../harness/server-process.js';
import { fourLetterWord, ZookeeperEnsemble } from '../harness/zookeeper-server.js';
import { RULE_TAG } from './iptables.js';
import { isolatePorts } from './port-isolation.js';
import { planRow } from './row-plan.js';

// The member isolation the nemesis's `isolate leader` / `isolate member` rows use, checked on real
// clusters: the isolated member answers nobody (new connections, and those it had), its peers elect
// a leader without it and serve writes, and the heal lets it back in.

const ANSWER_BOUND_MS = 1_500;
const base64 = (text: string) => Buffer.from(text).toString('base64');

/** Connects to `port` now; `ask(request)` later sends `request` on that connection and resolves whether any byte came back within `ms`. */
async function openConnection(
  port: number,
): Promise<{ answers(request: string, ms: number): Promise<boolean>; socket: Socket }> {
  const socket = createConnection({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return {
    socket,
    answers: (request, ms) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        socket.once('data', () => (clearTimeout(timer), resolve(true)));
        socket.once('close', () => (clearTimeout(timer), resolve(true)));
        socket.write(request);
      }),
  };
}

/** Whether a new TCP connection to `port` is established within `ms`. */
function connects(port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (connected: boolean) => (clearTimeout(timer), socket.destroy(), resolve(connected));
    const timer = setTimeout(() => done(false), ms);
    socket.once('connect', () => done(true)).once('error', () => done(false));
  });
}

/** etcd's HTTP gateway: puts `key` through `member`; resolves whether it answered OK within `ms`. */
async function etcdPut(member: EtcdMember, key: string, ms: number): Promise<boolean> {
  try {
    const response = await fetch(`${member.url}/v3/kv/put`, {
      method: 'POST',
      body: JSON.stringify({ key: base64(key), value: base64('v') }),
      signal: AbortSignal.timeout(ms),
    });
    return response.ok;
  } catch {
    return false;
  }
}

const ourRules = () =>
  execFileSync('/usr/sbin/iptables', ['-w', '-S'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`"${RULE_TAG}"`) || line.includes(` ${RULE_TAG} `));

// What the `isolate` rows need: skipped with the reason where missing, failed under CI=true (row-plan.ts).
const plan = planRow('isolate member');
if (!plan.run && !plan.skip)
  it('port isolation of a cluster member can run here', () => void expect(plan.reason).toBeUndefined());

(plan.run ? describe : describe.skip)(
  `port isolation of a cluster member${plan.run ? '' : ` [skipped: ${plan.reason}]`}`,
  () => {
    describe('etcd, 3 members', () => {
      let cluster: EtcdCluster;
      beforeAll(async () => (cluster = await EtcdCluster.start(3)), 90_000);
      afterAll(() => cluster?.destroy(), 30_000);

      it('cuts the leader off from its clients and its peers; the others elect a leader and serve writes; the heal lets it back', async () => {
        const leader = await cluster.leader();
        const others = cluster.members.filter((member) => member !== leader);
        const earlier = await openConnection(leader.clientPort);
        const heal = isolatePorts([leader.clientPort, leader.peerPort], { peersOnly: false, pid: leader.pid! });
        try {
          expect(await earlier.answers('GET /health HTTP/1.1\r\nHost: etcd\r\n\r\n', ANSWER_BOUND_MS)).toBe(false);
          expect(await connects(leader.clientPort, ANSWER_BOUND_MS)).toBe(false);
          expect(await etcdPut(leader, 'ndl-isolation/through-isolated', ANSWER_BOUND_MS)).toBe(false);
          // The others notice its silence, elect one of them and commit writes without it.
          await waitUntil(
            'a write through another member',
            () => etcdPut(others[0], 'ndl-isolation/through-other', 2_000),
            30_000,
            100,
          );
          const { leader: newLeader } = await others[1].status();
          expect([(await others[0].status()).member, (await others[1].status()).member]).toContain(newLeader);
        } finally {
          heal();
          earlier.socket.destroy();
        }
        expect(ourRules()).toEqual([]);
        await waitUntil(
          'the healed member serving writes again',
          () => etcdPut(leader, 'ndl-isolation/after-heal', 2_000),
          30_000,
          100,
        );
      }, 90_000);
    });

    describe('ZooKeeper, 3 members', () => {
      let ensemble: ZookeeperEnsemble;
      beforeAll(async () => (ensemble = await ZookeeperEnsemble.start(3)), 90_000);
      afterAll(() => ensemble?.destroy(), 30_000);

      it('cuts the leader off from its clients and its peers; the others elect a leader and serve writes; the heal lets it back', async () => {
        const leader = await ensemble.leader();
        const others = ensemble.members.filter((member) => member !== leader);
        const earlier = await openConnection(leader.port);
        const heal = isolatePorts([leader.port, ...leader.peerPorts], { peersOnly: false, pid: leader.pid! });
        try {
          expect(await earlier.answers('srvr', ANSWER_BOUND_MS)).toBe(false);
          expect(await connects(leader.port, ANSWER_BOUND_MS)).toBe(false);
          // The others elect a leader among themselves and take a write (a session and a node created through them).
          await waitUntil(
            'a leader among the other two',
            async () => (await Promise.all(others.map((m) => m.mode()))).includes('leader'),
            30_000,
            100,
          );
          expect(
            await zookeeperCreate(
              others.map((member) => member.connectionString).join(','),
              `/ndl-isolation-${Date.now()}`,
              10_000,
            ),
          ).toBe(true);
          expect(
            await zookeeperCreate(leader.connectionString, `/ndl-isolation-isolated-${Date.now()}`, ANSWER_BOUND_MS),
          ).toBe(false);
        } finally {
          heal();
          earlier.socket.destroy();
        }
        expect(ourRules()).toEqual([]);
        await waitUntil(
          'the healed member back in the ensemble',
          async () => /Mode: (leader|follower)/.test(await fourLetterWord(leader.port, 'srvr', 1_000).catch(() => '')),
          30_000,
          100,
        );
      }, 90_000);
    });
  },
);

interface ZkClient {
  once(event: 'connected', listener: () => void): void;
  connect(): void;
  close(): void;
  create(path: string, callback: (error: Error | null) => void): void;
}

/** Creates `path` through a new ZooKeeper session on `connectionString`; resolves whether that succeeded within `ms`. */
function zookeeperCreate(connectionString: string, path: string, ms: number): Promise<boolean> {
  const { createClient } = createRequire(import.meta.url)('node-zookeeper-client') as {
    createClient(connectionString: string, options: { sessionTimeout: number; retries: number }): ZkClient;
  };
  const client = createClient(connectionString, { sessionTimeout: 4_000, retries: 0 });
  return new Promise((resolve) => {
    const done = (created: boolean) => (clearTimeout(timer), client.close(), resolve(created));
    const timer = setTimeout(() => done(false), ms);
    client.once('connected', () => client.create(path, (error) => done(error === null)));
    client.connect();
  });
}
