import { hostname } from 'node:os';
import { createLockBackend } from '../backends/create-backend.js';
import { LockEngine } from '../engine/lock-engine.js';
import { InvalidLockArgumentError } from '../errors.js';
import { parseCliArgs, UsageError, type CliCommand } from './cli-args.js';
import { perform } from './cli-commands.js';
import type { CliIo } from './cli-io.js';
import { EXIT, USAGE } from './cli-usage.js';
import { describeStoreFailure } from './store-failure.js';

export type { CliIo } from './cli-io.js';

/**
 * Runs the operator CLI once; resolves the exit code (EXIT: 0 done, 1 store failure or not
 * confirmed, 2 bad command line). Connects with the same backend options as the app, as an
 * instance named `cli@host:pid`, and closes the connection before resolving.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: CliCommand | 'help';
  try {
    command = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return usageError(io, error.message);
  }
  if (command === 'help') {
    io.stdout.write(USAGE);
    return EXIT.done;
  }
  let engine: LockEngine | undefined;
  try {
    engine = new LockEngine(await createLockBackend(command.backend), {
      keyPrefix: command.keyPrefix,
      instance: `cli@${hostname()}:${process.pid}`,
    });
    return await perform(engine, command, io);
  } catch (error) {
    // The store options, the key, the limit or the cursor: refused before anything reached the store.
    if (error instanceof InvalidLockArgumentError) return usageError(io, error.message);
    io.stderr.write(`error: ${await describeStoreFailure(command.backend, error)}\n`);
    return EXIT.failed;
  } finally {
    await engine?.close().catch(() => undefined);
  }
}

function usageError(io: CliIo, message: string): number {
  io.stderr.write(`error: ${message}\n\n${USAGE}`);
  return EXIT.usage;
}
