import { execFileSync } from 'node:child_process';

// Drops every loopback packet to and from a port with iptables, as a real partition does: the
// client's kernel retransmits with exponential back-off (a Node proxy's partition never makes it).
// Rules carry the comment `ndl-robust2` and are removed by `undrop()`, and on exit.

const IPTABLES = '/usr/sbin/iptables';
const TAG = 'ndl-robust2';
const dropped = new Set<number>();

const rules = (port: number) => [
  ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), '-m', 'comment', '--comment', TAG, '-j', 'DROP'],
  ['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(port), '-m', 'comment', '--comment', TAG, '-j', 'DROP'],
];

/** Whether iptables can be used here (root, the binary present). */
export function canDropPorts(): boolean {
  try {
    execFileSync(IPTABLES, ['-w', '-S', 'INPUT'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function dropPort(port: number): void {
  dropped.add(port);
  for (const rule of rules(port)) execFileSync(IPTABLES, ['-w', '-I', ...rule]);
}

export function undropPort(port: number): void {
  dropped.delete(port);
  for (const rule of rules(port)) {
    try {
      execFileSync(IPTABLES, ['-w', '-D', ...rule], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
}

process.once('exit', () => {
  for (const port of [...dropped]) undropPort(port);
});
