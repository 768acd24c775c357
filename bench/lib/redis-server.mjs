// A throwaway redis-server on a free 127.0.0.1 port, no persistence (same as test/harness/redis-server.ts).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free port (or `wanted`, rejecting if it is taken). */
export function freePort(wanted = 0) {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(wanted, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export function redisVersion() {
  return execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1];
}

/** redis-server's CPU time so far, in µs (user + system, `INFO cpu`); `cli` is a started server's. */
export function redisCpuUs(cli) {
  const info = cli('INFO', 'cpu');
  return (
    ['used_cpu_sys', 'used_cpu_user'].reduce(
      (sum, name) => sum + Number(new RegExp(`${name}:([\\d.]+)`).exec(info)[1]),
      0,
    ) * 1e6
  );
}

/** Starts redis-server (with `extraArgs`, e.g. --replicaof; on `port`, else a free one); resolves { url, port, pid, cli(...args), stop() }. */
export async function startRedis(extraArgs = [], port = undefined) {
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ndl-bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
    { stdio: 'ignore' },
  );
  const cli = (...args) =>
    execFileSync('redis-cli', ['-p', String(port), ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  const stop = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    try {
      if (cli('PING') === 'PONG') break;
    } catch {
      // not up yet
    }
    if (i > 200) {
      stop();
      throw new Error('redis-server did not start (is it installed? apt-get install redis-server)');
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid, cli, stop };
}
