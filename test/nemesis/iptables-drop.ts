import { execFileSync } from 'node:child_process';

const TAG = 'ndl-nemesis';
const rules = new Set<string>();

/** The INPUT rules that drop both directions of every connection to `port` on loopback (client to proxy and back). */
const specs = (port: number) => [
  ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), '-m', 'comment', '--comment', TAG, '-j', 'DROP'],
  ['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(port), '-m', 'comment', '--comment', TAG, '-j', 'DROP'],
];

/**
 * Drops packets between a client and its proxy's `port` with iptables (needs root): unlike the
 * proxy's own partition, the client's kernel retransmits with exponential back-off, as across a
 * real network partition. Every rule is tagged `ndl-nemesis`, matches only that port, and is
 * removed by {@link undropPort} or {@link undropAll} (also on exit).
 */
export function dropPort(port: number): void {
  for (const spec of specs(port)) {
    execFileSync('iptables', ['-w', '-I', ...spec]);
    rules.add(JSON.stringify(spec));
  }
}

export function undropPort(port: number): void {
  for (const spec of specs(port)) {
    const key = JSON.stringify(spec);
    if (!rules.has(key)) continue;
    try {
      execFileSync('iptables', ['-w', '-D', ...spec], { stdio: 'ignore' });
    } catch {
      // already gone
    }
    rules.delete(key);
  }
}

export function undropAll(): void {
  for (const key of [...rules]) {
    try {
      execFileSync('iptables', ['-w', '-D', ...(JSON.parse(key) as string[])], { stdio: 'ignore' });
    } catch {
      // already gone
    }
    rules.delete(key);
  }
}

/** Whether iptables can be used here (root, the binary present). */
export function canDrop(): boolean {
  try {
    execFileSync('iptables', ['-w', '-S', 'INPUT'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

process.once('exit', undropAll);
