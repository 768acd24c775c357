import type { LockHolder, LockInfo } from '../engine/lock-info.js';

/** Keys and labels are data from the store: control characters (terminal escapes) never reach the terminal. */
export function printable(text: string, max = 60): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

function seconds(ms: number | undefined): string {
  return ms === undefined ? '-' : `${(ms / 1000).toFixed(1)}s`;
}

/** How long ago, compact: `8.2s`, `5m02s`, `3h04m`, `2d05h`; `-` when unknown. */
export function age(since: number | undefined, now: number): string {
  if (since === undefined) return '-';
  const ms = Math.max(0, now - since);
  if (ms < 60_000) return seconds(ms);
  const [s, m, h, d] = [
    Math.floor(ms / 1000) % 60,
    Math.floor(ms / 60_000) % 60,
    Math.floor(ms / 3_600_000) % 24,
    Math.floor(ms / 86_400_000),
  ];
  const two = (n: number) => String(n).padStart(2, '0');
  return d > 0 ? `${d}d${two(h)}h` : h > 0 ? `${h}h${two(m)}m` : `${m}m${two(s)}s`;
}

function holderCells(info: LockInfo, holder: LockHolder | undefined, now: number): string[] {
  const mode = holder?.permit ? 'permit' : (info.mode ?? '-');
  return [
    printable(info.key),
    mode,
    printable(holder?.instance ?? '-', 30),
    printable(holder?.label ?? '-', 40),
    holder?.fence === undefined ? '-' : String(holder.fence),
    age(holder?.acquiredAt, now),
    seconds(holder?.expiresInMs),
    info.waiting === undefined ? '-' : String(info.waiting),
  ];
}

/** One row per holder (a lock with no holder but waiters: one row), aligned columns. */
export function formatTable(locks: readonly LockInfo[], now = Date.now()): string {
  const header = ['KEY', 'MODE', 'INSTANCE', 'LABEL', 'FENCE', 'AGE', 'EXPIRES', 'WAITING'];
  const rows = locks.flatMap((info) =>
    info.holders.length === 0
      ? [holderCells(info, undefined, now)]
      : info.holders.map((holder) => holderCells(info, holder, now)),
  );
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `inspect` for a person: the table, or a line saying nobody holds the key. */
export function formatInspect(info: LockInfo): string {
  const semaphore = info.semaphore
    ? `\nsemaphore: ${info.semaphore.used}${info.semaphore.permits === undefined ? '' : ` of ${info.semaphore.permits}`} permits taken`
    : '';
  if (!info.held) return `${printable(info.key)}: not held${info.waiting ? ` (${info.waiting} waiting)` : ''}`;
  return formatTable([info]) + semaphore;
}
