import { join } from 'node:path';
import { freePort } from './free-port.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

/**
 * A throwaway single-member etcd 3.4 on 127.0.0.1 (client and peer on free ports), data in a
 * temp dir. `restart()` keeps the data dir, as a real restart would; `kill`/`pause`/`resume`
 * inject faults.
 */
export class EtcdServer extends ServerProcess {
  private constructor(
    readonly clientPort: number,
    readonly peerPort: number,
    readonly dataDir: string,
  ) {
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const clientUrl = `http://127.0.0.1:${clientPort}`;
    super('etcd', requireBinary('/usr/bin/etcd', 'etcd-server'), [
      '--name',
      'test',
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
      `test=${peerUrl}`,
      '--initial-cluster-state',
      'new',
      '--logger',
      'zap',
      '--log-outputs',
      join(dataDir, 'etcd.log'),
    ]);
  }

  /** The client URL, as the backend's `hosts` option takes it. */
  get url(): string {
    return `http://127.0.0.1:${this.clientPort}`;
  }

  static async start(): Promise<EtcdServer> {
    const server = new EtcdServer(await freePort(), await freePort(), tempDir('etcd'));
    await server.restart();
    return server;
  }

  /** (Re)starts on the same ports and data dir: a lock's key and lease survive, as after a real restart. */
  async restart(): Promise<void> {
    if (this.running) await this.stop();
    this.start();
    await waitUntil(`etcd on port ${this.clientPort} (output: ${this.recentOutput})`, () => this.healthy(), 20_000);
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    removeDir(this.dataDir);
  }

  async healthy(): Promise<boolean> {
    if (!this.running) return false;
    const response = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1_000) });
    const body = (await response.json()) as { health?: string };
    return body.health === 'true';
  }
}
