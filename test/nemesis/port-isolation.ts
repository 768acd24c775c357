import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { addRule, RULE_TAG, removeRule } from './iptables.js';

/** The loopback address the clients' proxies connect from when a store's members are isolated by port (NemesisStore.proxyFrom). */
export const PROXY_ADDRESS = '127.0.0.2';

const CGROUP_ROOT = existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup';

/**
 * Cuts a server off by its ports (root only): every packet to or from `ports` on loopback is
 * dropped, except, with `peersOnly`, those of the clients' proxies (from {@link PROXY_ADDRESS}).
 * With `pid`, the server's own outbound connections go too (a Redis Cluster node's links to its
 * peers' bus ports: each peer counts any data from it as a sign of life): those it has, by their
 * ports, and those it opens meanwhile, by a cgroup. A cgroup alone does not do: a socket's cgroup is
 * fixed when the socket is made, so it misses a running server's connections and those it accepts
 * on its old listener. Resolves the heal.
 */
export function isolatePorts(ports: readonly number[], { peersOnly, pid }: { peersOnly: boolean; pid?: number }): () => void {
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
  for (const spec of specs) addRule(spec);
  return () => {
    for (const spec of specs) removeRule(spec);
    if (cgroup === undefined) return;
    try {
      writeFileSync(`${CGROUP_ROOT}/cgroup.procs`, String(pid));
      rmdirSync(`${CGROUP_ROOT}/${cgroup}`);
    } catch {
      // the server is gone (its cgroup empties with it)
    }
  };
}

/** [local port, remote port] of each established TCP connection of process `pid` whose local port is not one of `listening`. */
function outboundConnections(pid: number, listening: readonly number[]): [number, number][] {
  const lines = execFileSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8' }).split('\n');
  return lines
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => line.trim().split(/\s+/).slice(2, 4).map((address) => Number(address.split(':').pop())) as [number, number])
    .filter(([local]) => !listening.includes(local));
}
