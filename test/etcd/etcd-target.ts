import { Etcd3 } from 'etcd3';
import { createLockBackend, type BackendOptions } from '../../lib/index.js';
import type { LockBackend } from '../../lib/backend.js';
import { escapeSegment } from '../../lib/backends/etcd/etcd-keys.js';
import { freePort } from '../harness/free-port.js';
import { EtcdServer } from '../harness/etcd-server.js';

/** Lease TTL of holder processes that the tests kill or pause. etcd's own minimum with default timings is 2 s. */
export const CHILD_LEASE_TTL_SECONDS = 2;

/** One etcd server for a test file, plus helpers to reach into it behind the backends' back. */
export class EtcdFixture {
  server!: EtcdServer;
  private admin: Etcd3 | undefined;
  private readonly backends: LockBackend[] = [];

  /** Suites of one file may share the fixture: the server starts with the first and stops with the last. */
  private users = 0;

  async start(): Promise<void> {
    if (this.users++ === 0) this.server = await EtcdServer.start();
  }

  async stop(): Promise<void> {
    if (--this.users > 0) return;
    await Promise.allSettled(this.backends.splice(0).map((backend) => backend.close()));
    this.admin?.close();
    this.admin = undefined;
    await this.server?.destroy();
  }

  /** Backend options for this server; without a TTL, the backend's default (10 s). */
  options(leaseTtlSeconds?: number): BackendOptions {
    return {
      type: 'etcd',
      urls: this.server.url,
      ...(leaseTtlSeconds === undefined ? {} : { leaseTtlMs: leaseTtlSeconds * 1_000 }),
    };
  }

  async backend(leaseTtlSeconds?: number, extra: Record<string, unknown> = {}): Promise<LockBackend> {
    const backend = await createLockBackend({ ...this.options(leaseTtlSeconds), ...extra });
    this.backends.push(backend);
    return backend;
  }

  /** A plain etcd3 client of the test's own (an operator's view of the store). */
  get client(): Etcd3 {
    this.admin ??= new Etcd3({ hosts: this.server.url });
    return this.admin;
  }

  /** Every etcd key of one lock (its holders and its queue), in queue order. */
  async lockKeys(storeKey: string): Promise<{ key: string; createRevision: number; lease: string }[]> {
    const response = await this.client
      .getAll()
      .prefix(`${escapeSegment(storeKey)}/`)
      .sort('Create', 'Ascend')
      .exec();
    return response.kvs.map((kv) => ({
      key: kv.key.toString(),
      createRevision: Number(kv.create_revision),
      lease: kv.lease,
    }));
  }

  /** Deletes every key of one lock behind its holders' back. */
  async deleteLock(storeKey: string): Promise<void> {
    await this.client.delete().prefix(`${escapeSegment(storeKey)}/`);
  }

  /** A backend pointed at a port where no etcd listens. */
  async unreachableBackend(): Promise<LockBackend> {
    return createLockBackend({ type: 'etcd', urls: `http://127.0.0.1:${await freePort()}`, requestTimeoutMs: 2_000 });
  }
}
