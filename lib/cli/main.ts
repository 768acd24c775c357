#!/usr/bin/env node
import { runCli } from './cli.js';

// The bin entry point: the exit code is set, never process.exit(), so output is flushed first and
// the store's connections are closed. SIGINT / SIGTERM end `list --watch` cleanly (exit 0); a
// second one ends the process the default way.
const interrupted = new AbortController();
for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => interrupted.abort());

runCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: interrupted.signal,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
