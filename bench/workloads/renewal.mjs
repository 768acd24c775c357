// Workload 5: `locks` locks held at once with renewal on (lease `leaseMs`, renewed about every
// third of it). Over a window of `windowSeconds`: Redis commands per second (INFO stats, this
// process is the only client), CPU of this process, and the timers it keeps.
import { randomBytes } from 'node:crypto';
import { nowMs, sleep } from '../lib/clock.mjs';

export async function renewal(lock, { locks, leaseMs, windowSeconds, url }) {
  const { Redis } = await import('ioredis');
  const admin = new Redis(url);
  const prefix = `bench:renew:${randomBytes(4).toString('hex')}`;
  const releases = [];
  for (let i = 0; i < locks; i += 500) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(500, locks - i) }, (_, j) => lock.acquire(`${prefix}:${i + j}`, { leaseMs })),
    );
    releases.push(...batch);
  }
  // Let the renewal schedule settle into its steady state before measuring.
  await sleep(leaseMs / 3);
  const commands = async () => Number((await admin.info('stats')).match(/total_commands_processed:(\d+)/)[1]);
  const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
  const commandsBefore = await commands();
  const cpuBefore = process.cpuUsage();
  const startedAt = nowMs();
  const timersHeld = timers();
  await sleep(windowSeconds * 1000);
  const elapsed = (nowMs() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const commandsAfter = await commands();
  await Promise.all(releases.map((release) => release()));
  await admin.quit();
  return {
    locks,
    leaseMs,
    redisCommandsPerSec: (commandsAfter - commandsBefore - 1) / elapsed,
    cpuMsPerSec: (cpu.user + cpu.system) / 1000 / elapsed,
    timersWhileHolding: timersHeld,
  };
}
