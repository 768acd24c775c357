import { setTimeout as sleep } from 'node:timers/promises';
import type { Writable } from 'node:stream';

/** ANSI: cursor to the top left, then clear the screen. */
const CLEAR_SCREEN = '\u001b[H\u001b[2J';

interface WatchOptions {
  readonly intervalMs: number;
  /** One JSON document per line (NDJSON), never a clear or a separator. */
  readonly json: boolean;
  /** Ends the watch (SIGINT, SIGTERM) once the refresh in flight, if any, is printed. */
  readonly signal?: AbortSignal;
}

/**
 * `list --watch`: prints `render()` every `intervalMs` until the signal aborts. On a terminal each
 * refresh replaces the last (the screen is cleared); elsewhere (a pipe, a file) each refresh is
 * appended after a `--- <ISO time> ---` separator line. A failing refresh ends the watch (it rejects).
 */
export async function watch(
  render: (now: number) => Promise<string>,
  stdout: Writable & { isTTY?: boolean },
  options: WatchOptions,
): Promise<void> {
  const seconds = options.intervalMs / 1000;
  while (!options.signal?.aborted) {
    const now = Date.now();
    const body = await render(now);
    const at = new Date(now).toISOString();
    if (options.json) stdout.write(`${body}\n`);
    else if (stdout.isTTY) stdout.write(`${CLEAR_SCREEN}Every ${seconds}s, ${at} (Ctrl-C to stop)\n\n${body}\n`);
    else stdout.write(`--- ${at} ---\n${body}\n`);
    try {
      await sleep(options.intervalMs, undefined, { signal: options.signal });
    } catch {
      return;
    }
  }
}
