import { addRule, removeRule } from './iptables.js';

/** The loopback address the clients' proxies connect from when a store's members are isolated by port (NemesisStore.proxyFrom). */
export const PROXY_ADDRESS = '127.0.0.2';

/**
 * Cuts a server off by its ports (root only): every packet to or from `ports` on loopback is
 * dropped, except, with `peersOnly`, those of the clients' proxies (from {@link PROXY_ADDRESS}).
 * Port rules, not a cgroup: a socket's cgroup is fixed when the socket is made, so a cgroup rule
 * misses the connections a running server already has or accepts on its old listener. A server's
 * own outbound connections (a Redis Cluster node's links to its peers' bus ports) are not cut.
 * Resolves the heal.
 */
export function isolatePorts(ports: readonly number[], { peersOnly }: { peersOnly: boolean }): () => void {
  const exceptProxies = (flag: '-s' | '-d') => (peersOnly ? ['!', flag, PROXY_ADDRESS] : []);
  const specs = ports.flatMap((port) => [
    ['INPUT', '-i', 'lo', '-p', 'tcp', '--dport', String(port), ...exceptProxies('-s'), '-j', 'DROP'],
    ['INPUT', '-i', 'lo', '-p', 'tcp', '--sport', String(port), ...exceptProxies('-d'), '-j', 'DROP'],
  ]);
  for (const spec of specs) addRule(spec);
  return () => {
    for (const spec of specs) removeRule(spec);
  };
}
