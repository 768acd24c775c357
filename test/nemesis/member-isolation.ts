import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { processTree } from '../faults/process-tree.js';
import { addRule, canUseIptables, removeRule } from './iptables.js';

/** The cgroup v2 hierarchy: beside v1 (hybrid) or alone (unified). */
const CGROUP_ROOT = existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup';

/** Whether a member can be isolated here: cgroup v2 (the iptables cgroup match needs it) and iptables as root. */
export function canIsolate(): boolean {
  return existsSync(`${CGROUP_ROOT}/cgroup.procs`) && existsSync(`${CGROUP_ROOT}/cgroup.subtree_control`) && canUseIptables();
}

/**
 * Cuts one cluster member off from its peers and its clients: its processes go into a cgroup (v2)
 * of their own, and iptables drops every packet they send or receive (root only). All members run
 * on 127.0.0.1, so ports alone cannot tell a member's own connections to its peers apart.
 * Resolves the heal.
 */
export function isolateProcess(pid: number, name: string): () => void {
  const path = `ndl-nemesis-${name}`;
  mkdirSync(`${CGROUP_ROOT}/${path}`, { recursive: true });
  for (const each of processTree(pid)) writeFileSync(`${CGROUP_ROOT}/${path}/cgroup.procs`, String(each));
  const specs = [
    ['OUTPUT', '-m', 'cgroup', '--path', path, '-j', 'DROP'],
    ['INPUT', '-m', 'cgroup', '--path', path, '-j', 'DROP'],
  ];
  for (const spec of specs) addRule(spec);
  return () => {
    for (const spec of specs) removeRule(spec);
    for (const each of processTree(pid)) {
      try {
        writeFileSync(`${CGROUP_ROOT}/cgroup.procs`, String(each));
      } catch {
        // gone
      }
    }
    try {
      rmdirSync(`${CGROUP_ROOT}/${path}`);
    } catch {
      // still in use by a process that just forked: harmless, empty cgroups are cheap
    }
  };
}
