import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { addRule, canUseIptables, RULE_TAG, removeRule } from './iptables.js';

/** The loopback address the clients' proxies connect from when a store's members are isolated by port (NemesisStore.proxyFrom). */
export const PROXY_ADDRESS = '127.0.0.2';

/** The cgroup v2 hierarchy: beside v1 (hybrid) or alone (unified). */
const CGROUP_ROOT = existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup';

/** Whether a member can be isolated here: iptables as root, and cgroup v2 (for the connections a member opens while isolated). */
export function canIsolate(): boolean {
  return existsSync(`${CGROUP_ROOT}/cgroup.procs`) && canUseIptables();
}

/**
 * Cuts a server off by its ports (root only): every packet to or from `ports` on loopback is
 * dropped, except, with `peersOnly`, those of the clients' proxies (from {@link PROXY_ADDRESS}).
 * With `pid`, the server's own outbound connections go too (an etcd member's streams to its peers'
 * peer ports, a ZooKeeper follower's link to the leader's quorum port, a Redis Cluster node's links
 * to its peers' bus ports): those it has, by their ports, and those it opens meanwhile, by a cgroup.
 * A cgroup alone does not do: a socket's cgroup is fixed when the socket is made, so it misses a
 * running server's connections and those it accepts on its old listener (and iptables' INPUT chain
 * never matches a cgroup). Resolves the heal.
 */
export function isolatePorts(
  ports: readonly number[],
  { peersOnly, pid }: { peersOnly: boolean; pid?: number },
): () => void {
  const exceptProxies = (flag: '-s' | '-d') => (peersOnly ? ['!', flag, PROXY_ADDRESS] : []);
  const specs = ports.flatMap((port) => [
    ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), ...exceptProxies('-s'), '-j', 'DROP'],
    ['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(port), ...exceptProxies('-d'), '-j', 'DROP'],
  ]);
  let cgroup: string | undefined;
  if (pid !== undefined) {
    for (const [local, remote] of outboundConnections(pid, ports)) {
      specs.push(['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(local), '--dport', String(remote), '-j', 'DROP']);
      specs.push(['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(remote), '--dport', String(local), '-j', 'DROP']);
    }
    cgroup = `${RULE_TAG}-${pid}`;
    mkdirSync(`${CGROUP_ROOT}/${cgroup}`, { recursive: true });
    writeFileSync(`${CGROUP_ROOT}/${cgroup}/cgroup.procs`, String(pid));
    specs.push(['OUTPUT', '-o', 'lo', '-m', 'cgroup', '--path', cgroup, '-j', 'DROP']);
  }
  // A connection between two of the server's own sockets (etcd's gateway to its client port) shows up from both ends: one rule each.
  const unique = [...new Map(specs.map((spec) => [JSON.stringify(spec), spec])).values()];
  const heal = () => {
    for (const spec of unique) removeRule(spec);
    if (cgroup === undefined) return;
    try {
      writeFileSync(`${CGROUP_ROOT}/cgroup.procs`, String(pid));
      rmdirSync(`${CGROUP_ROOT}/${cgroup}`);
    } catch {
      // the server is gone (its cgroup empties with it)
    }
  };
  try {
    for (const spec of unique) addRule(spec);
  } catch (error) {
    heal();
    throw error;
  }
  return heal;
}

/** [local port, remote port] of each established TCP connection of process `pid` whose local port is not one of `listening`. */
function outboundConnections(pid: number, listening: readonly number[]): [number, number][] {
  const lines = execFileSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8' }).split('\n');
  return lines
    .filter((line) => line.includes(`pid=${pid},`))
    .map(
      (line) =>
        line
          .trim()
          .split(/\s+/)
          .slice(2, 4)
          .map((address) => Number(address.split(':').pop())) as [number, number],
    )
    .filter(([local]) => !listening.includes(local));
}
