import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { keySlot } from '../../lib/backends/redis/key-slot.js';
import { ShardSubscriptions, type ShardedCluster } from '../../lib/backends/redis/shard-subscriptions.js';

// The routing logic on a Cluster look-alike: which master each channel is subscribed on, what a MOVED
// answer, a moved slot and a lost master do. test/redis/cluster-sharded-pubsub.test.ts runs it on a real Cluster.

/** A node connection look-alike: records its commands; its SSUBSCRIBEs fail with what `refusing` holds for its node. */
class FakeConnection extends EventEmitter {
  readonly commands: string[] = [];
  disconnected = false;

  constructor(
    readonly key: string,
    private readonly refusing: Map<string, Error>,
  ) {
    super();
  }

  ssubscribe(channel: string): Promise<unknown> {
    this.commands.push(`ssubscribe ${channel}`);
    const refusal = this.refusing.get(this.key);
    return refusal ? Promise.reject(refusal) : Promise.resolve(1);
  }

  sunsubscribe(channel: string): Promise<unknown> {
    this.commands.push(`sunsubscribe ${channel}`);
    return Promise.resolve(0);
  }

  disconnect(): void {
    this.disconnected = true;
  }
}

/** A Cluster look-alike whose slot map the test sets; every master's duplicate() is recorded. */
function fakeCluster(masterOfSlot: (slot: number) => string, masters: string[]) {
  const emitter = new EventEmitter();
  const connections: FakeConnection[] = [];
  const state = { masters, refreshes: 0, slotsOf: masterOfSlot, refusing: new Map<string, Error>() };
  const slots = new Proxy([] as string[][], {
    get: (target, property) =>
      typeof property === 'string' && /^\d+$/.test(property)
        ? [state.slotsOf(Number(property))]
        : Reflect.get(target, property),
  });
  const cluster = Object.assign(emitter, {
    isCluster: true,
    options: { slotsRefreshInterval: 60_000 },
    slots,
    nodes: () =>
      state.masters.map((key) => {
        const [host, port] = key.split(':');
        return {
          options: { host, port: Number(port) },
          duplicate: () => {
            const connection = new FakeConnection(key, state.refusing);
            connections.push(connection);
            return connection;
          },
        };
      }),
    refreshSlotsCache: () => void state.refreshes++,
  }) as unknown as ShardedCluster;
  return { cluster, connections, state, emitter };
}

const noEvents = { message: () => undefined, resumed: () => undefined };
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('sharded subscriptions routed by the slot map', () => {
  const [A, B] = ['127.0.0.1:7000', '127.0.0.1:7001'];
  const channel = '{lock:a}:released';

  it('subscribes a channel on the master of its slot, one connection per master', async () => {
    const other = '{lock:b}:released';
    const { cluster, connections } = fakeCluster((slot) => (slot === keySlot(channel) ? A : B), [A, B]);
    const subscriptions = new ShardSubscriptions(cluster, noEvents);
    await subscriptions.subscribe(channel);
    await subscriptions.subscribe(other);
    await subscriptions.subscribe('{lock:a}:semaphore');
    expect(connections.map(({ key, commands }) => [key, commands])).toEqual([
      [A, [`ssubscribe ${channel}`, 'ssubscribe {lock:a}:semaphore']],
      [B, [`ssubscribe ${other}`]],
    ]);
    await subscriptions.unsubscribe(channel);
    expect(connections[0].commands.at(-1)).toBe(`sunsubscribe ${channel}`);
    subscriptions.close();
  });

  it('reads the slot map again after a refused SSUBSCRIBE (a MOVED answer), and rejects so that the caller tries again', async () => {
    const { cluster, connections, state } = fakeCluster(() => A, [A, B]);
    const subscriptions = new ShardSubscriptions(cluster, noEvents);
    const moved = new Error(`MOVED ${keySlot(channel)} ${B}`);
    await subscriptions.subscribe(channel);
    state.refusing.set(A, moved);
    await subscriptions.unsubscribe(channel);
    await expect(subscriptions.subscribe(channel)).rejects.toBe(moved);
    expect(state.refreshes).toBe(1);
    // A slot map that moved the slot: the next try goes to the new master.
    state.slotsOf = () => B;
    await subscriptions.subscribe(channel);
    expect(connections.map(({ key }) => key)).toEqual([A, B]);
    expect(connections[1].commands).toEqual([`ssubscribe ${channel}`]);
    subscriptions.close();
  });

  it('follows a moved slot when the slot map is read again, wakes the waiters, and lets go of a node that is no longer a master', async () => {
    const { cluster, connections, state, emitter } = fakeCluster(() => A, [A, B]);
    let resumed = 0;
    const subscriptions = new ShardSubscriptions(cluster, { message: () => undefined, resumed: () => resumed++ });
    await subscriptions.subscribe(channel);
    emitter.emit('refresh');
    expect([connections.length, resumed]).toEqual([1, 0]);

    state.slotsOf = () => B;
    state.masters = [B];
    emitter.emit('refresh');
    await settle();
    expect(connections[0].commands).toEqual([`ssubscribe ${channel}`, `sunsubscribe ${channel}`]);
    expect(connections[0].disconnected).toBe(true);
    expect(connections[1].commands).toEqual([`ssubscribe ${channel}`]);
    expect(resumed).toBe(1);
    subscriptions.close();
  });

  it('tries a move again on the next slot map read when the new master refused it', async () => {
    const { cluster, connections, state, emitter } = fakeCluster(() => A, [A, B]);
    const subscriptions = new ShardSubscriptions(cluster, noEvents);
    await subscriptions.subscribe(channel);
    state.slotsOf = () => B;
    state.refusing.set(B, new Error('LOADING'));
    emitter.emit('refresh');
    await settle();
    state.refusing.clear();
    emitter.emit('refresh');
    await settle();
    expect(connections[1].commands).toEqual([`ssubscribe ${channel}`, `ssubscribe ${channel}`]);
    subscriptions.close();
  });

  it('subscribes a reconnected connection to its channels again and wakes the waiters; close() stops following the slot map', async () => {
    const { cluster, connections, emitter } = fakeCluster(() => A, [A]);
    let resumed = 0;
    const subscriptions = new ShardSubscriptions(cluster, { message: () => undefined, resumed: () => resumed++ });
    await subscriptions.subscribe(channel);
    const [connection] = connections;
    connection.emit('ready');
    expect(connection.commands).toEqual([`ssubscribe ${channel}`]);
    connection.emit('ready');
    expect(connection.commands).toEqual([`ssubscribe ${channel}`, `ssubscribe ${channel}`]);
    expect(resumed).toBe(1);

    subscriptions.close();
    expect(connection.disconnected).toBe(true);
    expect(emitter.listenerCount('refresh')).toBe(0);
    // Still listened to after close: an error that arrives late is not an unhandled 'error' event.
    expect(() => connection.emit('error', new Error('ERR max number of clients reached'))).not.toThrow();
  });
});
