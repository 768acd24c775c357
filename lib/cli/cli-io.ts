import type { Readable, Writable } from 'node:stream';

/** Where the CLI reads and writes, and what stops it (the bin wires these to the process). */
export interface CliIo {
  readonly stdin: Readable;
  /** `isTTY`: `list --watch` redraws in place on a terminal. */
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable;
  /** Aborted on SIGINT / SIGTERM: ends `list --watch` (exit 0) and answers a release question no. */
  readonly signal?: AbortSignal;
}
