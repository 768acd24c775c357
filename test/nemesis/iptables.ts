import { execFileSync } from 'node:child_process';

/**
 * Every rule the nemesis adds carries this comment, one per test process (jest runs test files in
 * several processes at once: one process's checks and clean-up must not see another's rules;
 * NEMESIS_RULE_TAG changes the prefix, for a second checkout on the machine), and is removed by
 * {@link removeRule} or {@link removeAllRules} (also on exit).
 */
export const RULE_TAG = `${process.env.NEMESIS_RULE_TAG ?? 'ndl-nemesis'}-${process.pid}`;
const IPTABLES = '/usr/sbin/iptables';
const rules = new Set<string>();

/** Adds (inserts first in its chain) `spec`: [chain, ...match, '-j', target]; the tag is added here. */
export function addRule(spec: readonly string[]): void {
  const [chain, ...rest] = spec;
  const full = [chain, ...rest.slice(0, -2), '-m', 'comment', '--comment', RULE_TAG, ...rest.slice(-2)];
  execFileSync(IPTABLES, ['-w', '-I', ...full]);
  rules.add(JSON.stringify(full));
}

export function removeRule(spec: readonly string[]): void {
  const [chain, ...rest] = spec;
  const key = JSON.stringify([chain, ...rest.slice(0, -2), '-m', 'comment', '--comment', RULE_TAG, ...rest.slice(-2)]);
  if (rules.delete(key)) deleteQuietly(JSON.parse(key) as string[]);
}

export function removeAllRules(): void {
  for (const key of [...rules]) {
    rules.delete(key);
    deleteQuietly(JSON.parse(key) as string[]);
  }
}

function deleteQuietly(full: string[]): void {
  try {
    execFileSync(IPTABLES, ['-w', '-D', ...full], { stdio: 'ignore' });
  } catch {
    // already gone
  }
}

/** Whether iptables can be used here (root, the binary present). */
export function canUseIptables(): boolean {
  try {
    execFileSync(IPTABLES, ['-w', '-S', 'INPUT'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Both directions of every loopback connection to `port` (a client's proxy): client to proxy and back. */
const portRules = (port: number) => [
  ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), '-j', 'DROP'],
  ['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(port), '-j', 'DROP'],
];

/**
 * Drops packets between a client and its proxy's `port`: unlike the proxy's own partition, the
 * client's kernel retransmits with exponential back-off, as across a real network partition.
 */
export function dropPort(port: number): void {
  for (const spec of portRules(port)) addRule(spec);
}

export function undropPort(port: number): void {
  for (const spec of portRules(port)) removeRule(spec);
}

process.once('exit', removeAllRules);
