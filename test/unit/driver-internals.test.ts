/**
 * The driver internals the library reaches (docs/driver-internals.md), checked on the installed
 * drivers: a release that renames one fails here, instead of the feature that needs it going quiet.
 * Where a library function finds the internal, the check runs again on the same driver object
 * without it (what such a release would give), to show that it would fail. The drivers talk to a
 * TCP server in this process that accepts connections and sends nothing unless a check writes.
 * `DRIVERS_FROM=<dir>` checks the drivers installed under <dir> (the same five packages, other
 * versions) instead of this repository's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once, type EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { redisConstructorOf, type IoredisModule, type RedisClient } from '../../lib/backends/redis/redis-client.js';
import { ShardSubscriptions } from '../../lib/backends/redis/shard-subscriptions.js';
import { failAwaitingCommands, oldestAwaiting } from '../../lib/backends/redis/stuck-connection.js';
import { sendCoalesced } from '../../lib/backends/redis/write-coalescing.js';
import { breakMysqlPool, mysqlConnections, type MysqlDriver } from '../../lib/backends/sql/mysql-driver.js';
import { breakPgPool, pgPoolClients, pgSocket, type PgDriver } from '../../lib/backends/sql/postgres-driver.js';
import { mysqlAddress, redisAddress } from '../../lib/backends/driver-address.js';
import { driverSocket } from '../../lib/backends/zookeeper/connection-watchdog.js';
import { replyParser } from '../../lib/backends/zookeeper/reply-stream-guard.js';
import type { ZkDriver } from '../../lib/backends/zookeeper/zk-driver.js';

const load = createRequire(
  process.env.DRIVERS_FROM ? resolve(process.env.DRIVERS_FROM, 'package.json') : import.meta.url,
);
/** `name` and its version, from the package.json of the package `from` finds (some do not export their package.json). */
function version(name: string, from = load): string {
  const main = from.resolve(name);
  const root = main.slice(0, main.lastIndexOf(`node_modules/${name}/`) + `node_modules/${name}`.length);
  return `${name} ${(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version}`;
}

/** `object` as a driver version without the property at the end of `path` would give it. */
function without<T extends object>(object: T, ...path: string[]): T {
  const [key, ...rest] = path;
  return new Proxy(object, {
    get: (target, property) =>
      property !== key
        ? Reflect.get(target, property)
        : rest.length
          ? without(Reflect.get(target, property) as object, ...rest)
          : undefined,
    has: (target, property) => (property === key && !rest.length ? false : Reflect.has(target, property)),
  });
}

const silent = createServer((socket) => sockets.push(socket));
const sockets: Socket[] = [];
let port: number;
beforeAll(async () => {
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  port = (silent.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((done) => silent.close(done));
});

describe.each(['ioredis', 'ioredis6'].map((name) => [version(name), name]))('%s', (_title, name) => {
  const driver = load(name) as IoredisModule & { Cluster: new (nodes: object[], options: object) => RedisClient };
  const Redis = redisConstructorOf(driver)!;
  const { Cluster } = driver;
  let client: RedisClient & { connect(): Promise<void> };
  beforeAll(async () => {
    // Nothing to send before the first command (the silent server answers nothing): no ready check, client info, or RESP3 HELLO (ioredis 6).
    const quiet = { enableReadyCheck: false, disableClientInfo: true, protocol: 2 };
    client = new Redis(`redis://127.0.0.1:${port}`, {
      lazyConnect: true,
      retryStrategy: () => null,
      ...quiet,
    }) as typeof client;
    await client.connect();
  });
  afterAll(() => client.disconnect());

  it('the commands awaiting answers, sent, left by a closed connection or queued while connecting, fail through their queue entries (the stuck-connection watch)', async () => {
    expect(oldestAwaiting(client)).toBeUndefined();
    const sent = client.ping();
    expect(oldestAwaiting(client)).toBeDefined();
    expect(oldestAwaiting(without(client, 'commandQueue'))).toBeUndefined();
    failAwaitingCommands(client);
    await expect(sent).rejects.toThrow('Command timed out');

    // A connection closed under its commands: they wait for the next one (ioredis resends them).
    const quiet = { enableReadyCheck: false, disableClientInfo: true, protocol: 2, disconnectTimeout: 100 };
    const reconnecting = new Redis(`redis://127.0.0.1:${port}`, { retryStrategy: () => 60_000, ...quiet });
    reconnecting.on('error', () => undefined);
    const [server] = (await once(silent, 'connection')) as [Socket];
    await once(reconnecting as unknown as EventEmitter, 'ready');
    const left = reconnecting.ping();
    server.end();
    await once(reconnecting as unknown as EventEmitter, 'reconnecting');
    // Until it connects again the same queue is its commandQueue too; then only prevCommandQueue holds them.
    expect(oldestAwaiting(without(reconnecting, 'commandQueue'))).toBeDefined();
    expect(oldestAwaiting(without(without(reconnecting, 'commandQueue'), 'prevCommandQueue'))).toBeUndefined();
    failAwaitingCommands(reconnecting);
    await expect(left).rejects.toThrow('Command timed out');
    reconnecting.disconnect();

    // Queued before the connection is up.
    const connecting = new Redis(`redis://127.0.0.1:${port}`, {
      lazyConnect: true,
      retryStrategy: () => null,
      ...quiet,
    });
    connecting.on('error', () => undefined);
    const queued = connecting.ping();
    expect(oldestAwaiting(connecting)).toBeDefined();
    expect(oldestAwaiting(without(connecting, 'offlineQueue'))).toBeUndefined();
    failAwaitingCommands(connecting);
    await expect(queued).rejects.toThrow('Command timed out');
    await once(connecting as unknown as EventEmitter, 'ready');
    connecting.disconnect();
  });

  it("stream is the connection's socket: write coalescing corks it for the commands that follow the first of a tick", async () => {
    const socket = client.stream as unknown as Writable;
    const ping = () => client.ping().catch(() => undefined);
    void sendCoalesced(client, ping);
    void sendCoalesced(client, ping);
    expect(socket.writableCorked).toBe(1);
    await new Promise((tick) => process.nextTick(tick));
    expect(socket.writableCorked).toBe(0);
    const stub = without(client, 'stream');
    void sendCoalesced(stub, ping);
    void sendCoalesced(stub, ping);
    expect(socket.writableCorked).toBe(0);
  });

  it("isCluster tells a Cluster from a single server; a Cluster's startupNodes give its address", () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port }], { lazyConnect: true });
    expect([client.isCluster, cluster.isCluster]).toEqual([false, true]);
    expect(redisAddress(cluster)).toBe(`127.0.0.1:${port}`);
    expect(redisAddress(without(cluster, 'startupNodes'))).toBeUndefined();
  });

  it("a Cluster's slots (per slot, its nodes' keys), nodes('master') and refreshSlotsCache route sharded subscriptions", () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port }], { lazyConnect: true }) as RedisClient & {
      slots: unknown[];
    };
    expect(Array.isArray(cluster.slots)).toBe(true);
    expect(ShardSubscriptions.canServe(cluster)).toBe(true);
    expect(ShardSubscriptions.canServe(without(cluster, 'slots'))).toBe(false);
    expect(ShardSubscriptions.canServe(without(cluster, 'refreshSlotsCache'))).toBe(false);
  });
});

describe(`${version('pg')}, ${version('pg-pool', createRequire(load.resolve('pg')))}`, () => {
  const pg = load('pg') as PgDriver;

  it("pg-pool's _clients and each client's connection.stream: breaking them fails a query that gets no answer (close)", async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port });
    const query = pool.query('SELECT 1');
    await once(silent, 'connection');
    expect(pgPoolClients(pool)).toHaveLength(1);
    expect(pgSocket(pgPoolClients(pool)![0])).toBeDefined();
    breakPgPool(pool);
    await expect(query).rejects.toThrow();
    expect(pgPoolClients(without(pool, '_clients'))).toBeUndefined();
    expect(pgSocket(without(new pg.Client({}), 'connection', 'stream'))).toBeUndefined();
    await pool.end();
  });

  it("pg-pool's Client: the class a user's pool makes its clients with (the LISTEN connection)", () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port });
    expect(pool.Client).toBe(pg.Client);
  });
});

describe(version('mysql2'), () => {
  const mysql = load('mysql2') as MysqlDriver;

  it("a pool's pool._allConnections: breaking them closes a connection that gets no answer (close); pool.config.connectionConfig gives its address", async () => {
    const pool = mysql.createPool({ host: '127.0.0.1', port }).promise();
    void pool.execute('SELECT 1', []).catch(() => undefined);
    const [server] = (await once(silent, 'connection')) as [Socket];
    expect(mysqlConnections(pool)).toHaveLength(1);
    breakMysqlPool(pool);
    await once(server, 'end');
    expect(mysqlConnections(without(pool, 'pool', '_allConnections'))).toBeUndefined();
    expect(mysqlAddress(pool)).toBe(`127.0.0.1:${port}`);
    expect(mysqlAddress(without(pool, 'pool', 'config', 'connectionConfig'))).toBeUndefined();
    await pool.end();
  });
});

describe(version('node-zookeeper-client'), () => {
  const zookeeper = load('node-zookeeper-client') as ZkDriver;

  it("connectionManager.onSocketData parses each connection's bytes, read when a connection starts; connectionManager.socket is that connection", async () => {
    const client = zookeeper.createClient(`127.0.0.1:${port}`, { sessionTimeout: 30_000, retries: 0 });
    const parser = replyParser(client)!;
    expect(parser).toBeDefined();
    expect('pendingBuffer' in parser).toBe(true);
    const parsed = new Promise<Buffer>((resolveParsed) => (parser.onSocketData = (data) => resolveParsed(data)));
    client.connect();
    const [server] = (await once(silent, 'connection')) as [Socket];
    server.write('!');
    expect(String(await parsed)).toBe('!');
    expect(driverSocket(client)?.bytesRead).toBe(1);
    client.close();
    expect(replyParser(without(client, 'connectionManager', 'onSocketData'))).toBeUndefined();
    expect(driverSocket(without(client, 'connectionManager', 'socket'))).toBeUndefined();
  });
});
