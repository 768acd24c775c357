import type { BackendOptions } from '../backends/backend-options.js';

/** One server of a store, as the CLI names it in errors: never with credentials. */
export interface StoreAddress {
  readonly host: string;
  readonly port: number;
  /** The URL to connect to for a probe (Redis family only; it may hold the password: never printed). */
  readonly url?: string;
}

const DEFAULT_PORTS = { redis: 6379, redlock: 6379, postgres: 5432, mysql: 3306, etcd: 2379, zookeeper: 2181 } as const;

/** `host:port`, with brackets around an IPv6 host. */
export function formatAddress(address: StoreAddress): string {
  return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

/** The servers the CLI's store options name, in the order given (unparseable entries are left out). */
export function storeAddresses(backend: BackendOptions): StoreAddress[] {
  switch (backend.type) {
    case 'redis':
      return fromUrls(backend.url === undefined ? [] : [backend.url], DEFAULT_PORTS.redis, true);
    case 'redlock':
      return fromUrls(backend.urls ?? [], DEFAULT_PORTS.redlock, true);
    case 'postgres':
      return fromUrls(backend.url === undefined ? [] : [backend.url], DEFAULT_PORTS.postgres, false);
    case 'mysql':
      return fromUrls(backend.url === undefined ? [] : [backend.url], DEFAULT_PORTS.mysql, false);
    case 'etcd':
      return fromUrls(
        typeof backend.urls === 'string' ? [backend.urls] : (backend.urls ?? []),
        DEFAULT_PORTS.etcd,
        false,
      );
    case 'zookeeper':
      // `h1:2181,h2:2181/chroot`: host:port pairs, the chroot after the first slash.
      return fromUrls(
        (backend.url ?? '')
          .split('/')[0]
          .split(',')
          .map((hostPort) => hostPort.trim()),
        DEFAULT_PORTS.zookeeper,
        false,
      );
    default:
      return [];
  }
}

function fromUrls(urls: readonly string[], defaultPort: number, probeUrl: boolean): StoreAddress[] {
  return urls.flatMap((text) => {
    let url: URL;
    try {
      url = new URL(text.includes('://') ? text : `store://${text}`);
    } catch {
      return [];
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (host === '') return [];
    return [{ host, port: url.port === '' ? defaultPort : Number(url.port), ...(probeUrl ? { url: text } : {}) }];
  });
}
