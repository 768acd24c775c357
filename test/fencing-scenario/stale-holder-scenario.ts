import { expect } from '@jest/globals';
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { BackendOptions, Lock, LockEngine } from '../../lib/index.js';
import type { GuardedResource, ResourceAddress } from './guarded-resource-client.mjs';

const HOLDER = fileURLToPath(new URL('./stale-holder.mjs', import.meta.url));
export const KEY_PREFIX = 'fence-scenario:';
/** B's bound on its wait for A's lease to lapse: far above every store's loss time (ZooKeeper's session, etcd's TTL: ~2.5 s). */
const B_WAIT_MS = 20_000;

/** What a guarded write of holder A came to: a refusal carries the StaleFenceError's fields. */
export type WriteOutcome =
  | { readonly event: 'wrote' }
  | { readonly event: 'refused'; readonly error: { name: string; resource: string; fence: number; highest: number } }
  | { readonly event: 'failed'; readonly error: { name: string; message: string } };

/** One resource both holders write to: where it is, and holder B's (this process's) connection to it. */
export interface ScenarioResource {
  readonly address: ResourceAddress;
  readonly connectionB: GuardedResource;
}

/** What one resource saw. */
export interface ScenarioOutcome {
  /** The value's name in the resource (the guard's `resource`). */
  readonly name: string;
  readonly fenceA: number;
  readonly fenceB: number;
  /** A's write while it held the lock. */
  readonly firstWriteA: WriteOutcome;
  /** A's write after B's, with the fence A had before its pause. */
  readonly lateWriteA: WriteOutcome;
  /** What the resource holds in the end. */
  readonly valueAfter: string | undefined;
}

/** How holder A loses its lock: a SIGSTOP past its lease (Kleppmann's GC pause), or an operator's `forceRelease` while A runs on. */
export type LoseLock = 'pause' | 'force-release';

/**
 * The Kleppmann scenario with holder A in a separate OS process (the built package): A acquires
 * and writes to every resource; A loses its lock (`loseLock`: SIGSTOPped, or force-released by an
 * operator through `engineB`); B (`engineB`, this process) acquires, which after a pause can only
 * happen once A's lease lapsed in the store, and writes to every resource; then A is sent its late
 * writes (and SIGCONTed), and their outcomes are awaited. A never checks its lease or signal before
 * writing. One outcome per resource, in order.
 */
export async function runStaleHolder(params: {
  loseLock: LoseLock;
  backend: BackendOptions;
  leaseMs: number;
  engineB: LockEngine;
  resources: readonly ScenarioResource[];
  dist: string;
}): Promise<ScenarioOutcome[]> {
  const id = randomUUID().slice(0, 8);
  const key = `${params.loseLock}:${id}`;
  const names = params.resources.map(({ address }) => `value:${address.kind}:${id}`);
  const resources = params.resources.map(({ address }, i) => ({
    kind: address.kind,
    url: address.url,
    name: names[i],
  }));
  const config = {
    backend: params.backend,
    key,
    keyPrefix: KEY_PREFIX,
    leaseMs: params.leaseMs,
    resources,
    dist: params.dist,
  };
  const child = fork(HOLDER, [JSON.stringify(config)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  const messages = childMessages(child);
  let lockB: Lock | undefined;
  try {
    const holding = await messages.next();
    if (holding.event !== 'holding') throw new Error(`holder A: ${JSON.stringify(holding)}`);
    if (params.loseLock === 'pause') child.kill('SIGSTOP');
    else if (!(await params.engineB.forceRelease(key, { reason: 'fencing scenario: an operator frees a stuck lock' })))
      throw new Error('forceRelease found nobody holding the lock');
    lockB = await params.engineB.acquire(key, { waitMs: B_WAIT_MS });
    for (const [i, { connectionB }] of params.resources.entries()) await connectionB.write(names[i], 'B', lockB.fence!);
    // The order reaches A through the pipe once it runs again, as its own next step would have.
    child.send({ cmd: 'write', value: 'A: late write, after the pause' });
    child.kill('SIGCONT');
    const written = await messages.next();
    const [first, late] = [holding.first, written.outcomes] as WriteOutcome[][];
    return await Promise.all(
      params.resources.map(async ({ connectionB }, i) => ({
        name: names[i],
        fenceA: holding.fence as number,
        fenceB: lockB!.fence!,
        firstWriteA: first[i],
        lateWriteA: late[i],
        valueAfter: await connectionB.read(names[i]),
      })),
    );
  } finally {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await lockB?.release().catch(() => undefined);
  }
}

/**
 * The same scenario for the memory store, whose fences exist in one process only: A and B are two
 * holders of one engine here. A's "pause" is this process's event loop blocked past A's lease (the
 * engine sees the lapse when it runs again and frees the key); B, waiting meanwhile, then acquires
 * and writes; only then does A write, with the fence it had.
 */
export async function runBlockedHolderInProcess(
  engine: LockEngine,
  resources: readonly GuardedResource[],
  leaseMs: number,
): Promise<ScenarioOutcome[]> {
  const id = randomUUID().slice(0, 8);
  const key = `blocked:${id}`;
  const names = resources.map((_, i) => `value:memory:${id}:${i}`);
  const lockA = await engine.acquire(key, { leaseMs });
  const fenceA = lockA.fence!;
  const first: WriteOutcome[] = [];
  for (const [i, resource] of resources.entries())
    first.push(await guardedWrite(resource, names[i], 'A: first write, while holding', fenceA));
  const acquiringB = engine.acquire(key, { waitMs: B_WAIT_MS });
  blockEventLoop(leaseMs + 150);
  const lockB = await acquiringB;
  try {
    for (const [i, resource] of resources.entries()) await resource.write(names[i], 'B', lockB.fence!);
    const late: WriteOutcome[] = [];
    for (const [i, resource] of resources.entries())
      late.push(await guardedWrite(resource, names[i], 'A: late write, after the pause', fenceA));
    return await Promise.all(
      resources.map(async (resource, i) => ({
        name: names[i],
        fenceA,
        fenceB: lockB.fence!,
        firstWriteA: first[i],
        lateWriteA: late[i],
        valueAfter: await resource.read(names[i]),
      })),
    );
  } finally {
    await lockB.release();
  }
}

/** What every store x resource pair must show: A's write while holding accepted, its late write refused (its fence, B's as the highest), B's value in place. */
export function expectStaleWriteRefused(outcome: ScenarioOutcome | undefined): void {
  expect(outcome?.firstWriteA).toEqual({ event: 'wrote' });
  expect(outcome!.fenceB).toBeGreaterThan(outcome!.fenceA);
  expect(outcome!.lateWriteA).toEqual({
    event: 'refused',
    error: { name: 'StaleFenceError', resource: outcome!.name, fence: outcome!.fenceA, highest: outcome!.fenceB },
  });
  expect(outcome!.valueAfter).toBe('B');
}

async function guardedWrite(
  resource: GuardedResource,
  name: string,
  value: string,
  fence: number,
): Promise<WriteOutcome> {
  try {
    await resource.write(name, value, fence);
    return { event: 'wrote' };
  } catch (error) {
    const e = error as { name: string; message: string; resource?: string; fence?: number; highest?: number };
    if (e.name === 'StaleFenceError')
      return { event: 'refused', error: { name: e.name, resource: e.resource!, fence: e.fence!, highest: e.highest! } };
    return { event: 'failed', error: { name: e.name, message: e.message } };
  }
}

function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** The child's messages in order; `next()` rejects if the child exits first. */
function childMessages(child: ChildProcess): { next(): Promise<Record<string, unknown>> } {
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const queue: Record<string, unknown>[] = [];
  const waiting: { resolve(message: Record<string, unknown>): void; reject(error: Error): void }[] = [];
  child.on('message', (message: Record<string, unknown>) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(message);
    else queue.push(message);
  });
  child.once('exit', (code, signal) => {
    for (const waiter of waiting.splice(0)) waiter.reject(new Error(`holder A exited (${code ?? signal}): ${stderr}`));
  });
  return {
    next: () =>
      new Promise((resolve, reject) => {
        const queued = queue.shift();
        if (queued) return resolve(queued);
        if (child.exitCode !== null || child.signalCode !== null)
          return reject(new Error(`holder A exited (${child.exitCode ?? child.signalCode}): ${stderr}`));
        waiting.push({ resolve, reject });
      }),
  };
}
