import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { createLockBackend } from '../backends/create-backend.js';
import { LockEngine } from '../engine/lock-engine.js';
import type { LockInfo } from '../engine/lock-info.js';
import { parseCliArgs, USAGE, UsageError, type CliCommand } from './cli-args.js';
import { formatInspect, formatTable, printable } from './cli-format.js';

/** Most locks `list --all` prints. */
const MAX_LISTED = 10_000;

export interface CliIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/**
 * Runs the operator CLI once; resolves the exit code (0 done, 1 failed or not confirmed, 2 usage).
 * Connects with the same backend options as the app, as an instance named `cli@host:pid`.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: CliCommand | 'help';
  try {
    command = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (command === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  let engine: LockEngine | undefined;
  try {
    engine = new LockEngine(await createLockBackend(command.backend), { keyPrefix: command.keyPrefix, instance: `cli@${hostname()}:${process.pid}` });
    return await perform(engine, command, io);
  } catch (error) {
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await engine?.close().catch(() => undefined);
  }
}

async function perform(engine: LockEngine, command: CliCommand, io: CliIo): Promise<number> {
  const print = (text: string) => io.stdout.write(`${text}\n`);
  if (command.action === 'list') {
    const { locks, cursor } = await listLocks(engine, command);
    if (command.json) print(JSON.stringify({ locks, ...(cursor ? { cursor } : {}) }, null, 2));
    else {
      print(locks.length === 0 ? 'no locks held' : formatTable(locks));
      if (cursor) print(`more: --cursor ${cursor}`);
    }
    return 0;
  }
  const key = command.target!;
  const info = await engine.inspect(key);
  if (command.action === 'inspect') {
    print(command.json ? JSON.stringify(info, null, 2) : formatInspect(info));
    return 0;
  }
  if (!info.held) {
    print(command.json ? JSON.stringify({ key, released: false }) : `${printable(key)}: not held, nothing to release`);
    return 0;
  }
  if (!command.yes && !(await confirm(io, info))) {
    io.stderr.write('not released\n');
    return 1;
  }
  const released = await engine.forceRelease(key, { reason: command.reason ?? 'released with the nestjs-distributed-lock CLI' });
  print(command.json ? JSON.stringify({ key, released, evicted: info.holders }) : released ? `${printable(key)}: released` : `${printable(key)}: its holder let go first, nothing to release`);
  return 0;
}

async function listLocks(engine: LockEngine, command: CliCommand): Promise<{ locks: LockInfo[]; cursor?: string }> {
  const locks: LockInfo[] = [];
  let cursor = command.cursor;
  do {
    const page = await engine.list({ prefix: command.target ?? '', limit: command.limit ?? 100, cursor });
    locks.push(...page.locks);
    cursor = page.cursor;
  } while (command.all && cursor !== undefined && locks.length < MAX_LISTED);
  return cursor === undefined ? { locks } : { locks, cursor };
}

/** Asks on stdin; only a line starting with `y` confirms (end of input does not). */
async function confirm(io: CliIo, info: LockInfo): Promise<boolean> {
  io.stdout.write(`${formatTable([info])}\nForce-release ${JSON.stringify(printable(info.key))}? Its holder loses it at its next renewal. [y/N] `);
  const lines = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of lines) return /^\s*y(es)?\s*$/i.test(line);
    return false;
  } finally {
    lines.close();
  }
}
