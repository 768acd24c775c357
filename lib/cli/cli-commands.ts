import { createInterface } from 'node:readline';
import type { LockEngine } from '../engine/lock-engine.js';
import type { LockInfo } from '../engine/lock-info.js';
import type { CliCommand } from './cli-args.js';
import { formatInspect, formatTable, printable } from './cli-format.js';
import { EXIT } from './cli-usage.js';
import type { CliIo } from './cli-io.js';
import { watch } from './cli-watch.js';

/** Most locks `list --all` prints. */
const MAX_LISTED = 10_000;

/** Runs one parsed command on a connected engine; resolves the exit code. Store errors reject. */
export async function perform(engine: LockEngine, command: CliCommand, io: CliIo): Promise<number> {
  const print = (text: string) => io.stdout.write(`${text}\n`);
  if (command.action === 'list') {
    const render = (now: number) => renderList(engine, command, now);
    if (command.watchMs === undefined) print(await render(Date.now()));
    else await watch(render, io.stdout, { intervalMs: command.watchMs, json: command.json, signal: io.signal });
    return EXIT.done;
  }
  const key = command.target!;
  const info = await engine.inspect(key);
  if (command.action === 'inspect') {
    print(command.json ? JSON.stringify(info, null, 2) : formatInspect(info));
    return EXIT.done;
  }
  if (!info.held) {
    print(command.json ? JSON.stringify({ key, released: false }) : `${printable(key)}: not held, nothing to release`);
    return EXIT.done;
  }
  if (!command.yes && !(await confirm(io, info))) {
    io.stderr.write('not released\n');
    return EXIT.failed;
  }
  const released = await engine.forceRelease(key, {
    reason: command.reason ?? 'released with the nestjs-distributed-lock CLI',
  });
  print(
    command.json
      ? JSON.stringify({ key, released, evicted: info.holders })
      : released
        ? `${printable(key)}: released`
        : `${printable(key)}: its holder let go first, nothing to release`,
  );
  return EXIT.done;
}

/** The list as printed: a table (or "no locks held") and the next cursor, or JSON (one line when watching). */
async function renderList(engine: LockEngine, command: CliCommand, now: number): Promise<string> {
  const { locks, cursor } = await listLocks(engine, command);
  if (command.json)
    return JSON.stringify(
      { locks, ...(cursor ? { cursor } : {}) },
      null,
      command.watchMs === undefined ? 2 : undefined,
    );
  const table = locks.length === 0 ? 'no locks held' : formatTable(locks, now);
  return cursor ? `${table}\nmore: --cursor ${cursor}` : table;
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

/** Asks on stdin; only a line starting with `y` confirms (end of input, or SIGINT, does not). */
async function confirm(io: CliIo, info: LockInfo): Promise<boolean> {
  io.stdout.write(
    `${formatTable([info])}\nForce-release ${JSON.stringify(printable(info.key))}? Its holder loses it at its next renewal. [y/N] `,
  );
  const lines = createInterface({ input: io.stdin, terminal: false });
  const interrupted = () => lines.close();
  io.signal?.addEventListener('abort', interrupted, { once: true });
  try {
    for await (const line of lines) return /^\s*y(es)?\s*$/i.test(line);
    return false;
  } finally {
    io.signal?.removeEventListener('abort', interrupted);
    lines.close();
  }
}
