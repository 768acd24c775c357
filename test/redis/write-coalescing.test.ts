import { describe, expect, it } from '@jest/globals';
import type { RedisClient } from '../../lib/backends/redis/redis-client.js';
import { MAX_COALESCED, sendCoalesced } from '../../lib/backends/redis/write-coalescing.js';

/** A socket like Node's: writes made while corked reach the wire together on the matching uncork. */
function fakeClient(status = 'ready') {
  const wire: string[][] = [];
  let depth = 0;
  let pending: string[] = [];
  const stream = {
    cork: () => void depth++,
    uncork: () => {
      depth--;
      if (depth === 0 && pending.length > 0) {
        wire.push(pending);
        pending = [];
      }
    },
  };
  const write = (command: string) => (depth > 0 ? pending.push(command) : wire.push([command]));
  const client = { status, stream } as unknown as RedisClient;
  const send = (command: string) => sendCoalesced(client, async () => (write(command), command));
  return { wire, send, depth: () => depth, client };
}

const endOfTick = () => new Promise((resolve) => process.nextTick(resolve));

describe('write coalescing of script calls', () => {
  it(`writes the first command of a tick at once and the rest in writes of at most ${MAX_COALESCED}, and leaves the socket uncorked`, async () => {
    const { wire, send, depth } = fakeClient();
    const commands = Array.from({ length: 1 + 2 * MAX_COALESCED + 3 }, (_, i) => `c${i}`);
    const replies = Promise.all(commands.map(send));
    expect(wire.map((write) => write.length)).toEqual([1, MAX_COALESCED, MAX_COALESCED]);
    await endOfTick();
    expect(wire.map((write) => write.length)).toEqual([1, MAX_COALESCED, MAX_COALESCED, 3]);
    expect(wire.flat()).toEqual(commands);
    expect(depth()).toBe(0);
    await expect(replies).resolves.toEqual(commands);
  });

  it('writes a lone command at once, and the first command of the next tick at once again', async () => {
    const { wire, send, depth } = fakeClient();
    void send('alone');
    expect(wire).toEqual([['alone']]);
    expect(depth()).toBe(0);
    await endOfTick();
    void send('next tick');
    expect(wire).toEqual([['alone'], ['next tick']]);
    expect(depth()).toBe(0);
  });

  it('starts a new batch after a full one, in the same tick', async () => {
    const { wire, send, depth } = fakeClient();
    for (let i = 0; i <= MAX_COALESCED; i++) void send(`a${i}`);
    expect(depth()).toBe(0);
    void send('next');
    expect(depth()).toBe(1);
    await endOfTick();
    expect(wire.map((write) => write.length)).toEqual([1, MAX_COALESCED, 1]);
    expect(depth()).toBe(0);
  });

  it('uncorks the socket at the end of the tick when a held-back send throws', async () => {
    const { wire, send, depth, client } = fakeClient();
    void send('first');
    const throwing = (): Promise<string> => {
      throw new Error('bad arguments');
    };
    expect(() => sendCoalesced(client, throwing)).toThrow('bad arguments');
    void send('after');
    expect(depth()).toBe(1);
    await endOfTick();
    expect(wire).toEqual([['first'], ['after']]);
    expect(depth()).toBe(0);
  });

  it('does not hold back the commands of a client that is not ready (ioredis queues those itself)', () => {
    const { wire, send, depth } = fakeClient('connecting');
    void send('queued');
    void send('queued too');
    expect(wire).toEqual([['queued'], ['queued too']]);
    expect(depth()).toBe(0);
  });
});
