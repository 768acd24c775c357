import { execFileSync } from 'node:child_process';

/** `pid` and every process below it (a server's workers: PostgreSQL backends, for instance). */
export function processTree(pid: number): number[] {
  let children = '';
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    // ps exits 1 when there are none
  }
  return [
    pid,
    ...children
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((n) => n > 0)
      .flatMap(processTree),
  ];
}

/** Sends `signal` to a server process we started and to its descendants, by PID. */
export function signalTree(pid: number | undefined, signal: 'SIGSTOP' | 'SIGCONT'): void {
  if (pid === undefined) return;
  for (const each of processTree(pid)) {
    try {
      process.kill(each, signal);
    } catch {
      // gone in the meantime
    }
  }
}
