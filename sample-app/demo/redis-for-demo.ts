import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { freePort } from './instances.js';

/** A throwaway redis-server for the demo when no --redis URL is given. */
export async function startThrowawayRedis(): Promise<{ url: string; stop(): void }> {
  const binary = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find(existsSync);
  if (!binary)
    throw new Error(
      'No redis-server found: pass --redis redis://host:port, or install redis-server (apt-get install redis-server)',
    );
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined); // refused until the server is up: expected while polling
  for (let i = 0; i < 100; i++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      probe.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  probe.disconnect();
  return { url, stop: () => void child.kill('SIGTERM') };
}
