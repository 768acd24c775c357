// A throwaway single-member etcd on free 127.0.0.1 ports, data in a temp dir (same settings as
// test/harness/etcd-server.ts).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.mjs';

/** Starts etcd; resolves { url, stop() }. */
export async function startEtcd() {
  if (!existsSync('/usr/bin/etcd')) throw new Error('etcd is not installed (apt-get install etcd-server)');
  const dir = mkdtempSync(join(tmpdir(), 'ndl-bench-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  const [clientUrl, peerUrl] = [`http://127.0.0.1:${client}`, `http://127.0.0.1:${peer}`];
  const child = spawn(
    '/usr/bin/etcd',
    [
      '--name',
      'bench',
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
      `bench=${peerUrl}`,
      '--initial-cluster-state',
      'new',
      '--logger',
      'zap',
      '--log-outputs',
      join(dir, 'etcd.log'),
    ],
    { stdio: 'ignore' },
  );
  const stop = () => {
    child.kill('SIGTERM');
    return new Promise((resolve) => {
      const done = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null) return done();
      child.once('exit', done);
    });
  };
  for (let i = 0; ; i++) {
    const healthy = await fetch(`${clientUrl}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) break;
    if (i > 400) {
      await stop();
      throw new Error('etcd did not start');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: clientUrl, stop };
}
