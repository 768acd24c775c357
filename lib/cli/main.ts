#!/usr/bin/env node
import { runCli } from './cli.js';

// The bin entry point: the exit code is set, never process.exit(), so output is flushed first.
runCli(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
