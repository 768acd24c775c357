import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../harness/free-port.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from '../harness/server-process.js';
import { makeTestCertificates, type TestCertificates } from './tls-certs.js';

const run = promisify(execFile);

/**
 * A single etcd 3.4 serving clients over TLS only, and only clients with a certificate signed by
 * its test CA (`--client-cert-auth`), on 127.0.0.1, data and certificates in a temp dir.
 */
export class TlsEtcdServer extends ServerProcess {
  private constructor(
    readonly clientPort: number,
    peerPort: number,
    private readonly dir: string,
    readonly certificates: TestCertificates,
  ) {
    const clientUrl = `https://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    super('etcd-tls', requireBinary('/usr/bin/etcd', 'etcd-server'), [
      '--name',
      'tls',
      '--data-dir',
      join(dir, 'data'),
      '--listen-client-urls',
      clientUrl,
      '--advertise-client-urls',
      clientUrl,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      `tls=${peerUrl}`,
      '--cert-file',
      certificates.serverCertFile,
      '--key-file',
      certificates.serverKeyFile,
      '--trusted-ca-file',
      certificates.caFile,
      '--client-cert-auth',
      '--logger',
      'zap',
      '--log-outputs',
      join(dir, 'etcd.log'),
    ]);
  }

  get url(): string {
    return `https://127.0.0.1:${this.clientPort}`;
  }

  static async start(): Promise<TlsEtcdServer> {
    const dir = tempDir('etcd-tls');
    const server = new TlsEtcdServer(await freePort(), await freePort(), dir, makeTestCertificates(dir));
    server.start();
    await waitUntil(
      `etcd (TLS) on port ${server.clientPort} (output: ${server.recentOutput})`,
      () => server.healthy(),
      20_000,
      50,
    );
    return server;
  }

  async destroy(): Promise<void> {
    await this.stop();
    removeDir(this.dir);
  }

  private async healthy(): Promise<boolean> {
    if (!this.running) return false;
    const { caFile, dir } = this.certificates;
    const args = [
      '--endpoints',
      this.url,
      '--cacert',
      caFile,
      '--cert',
      join(dir, 'client.crt'),
      '--key',
      join(dir, 'client.key'),
      'endpoint',
      'health',
    ];
    return run(requireBinary('/usr/bin/etcdctl', 'etcd-client'), args, {
      env: { ...process.env, ETCDCTL_API: '3' },
    }).then(
      () => true,
      () => false,
    );
  }
}
