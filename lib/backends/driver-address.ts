// Describes where a store lives (host:port, a list of them) for error messages. Never includes a
// user name, password or query string: only hosts and ports are read.

type Bag = Record<string, unknown>;

const asBag = (value: unknown): Bag | undefined =>
  typeof value === 'object' && value !== null ? (value as Bag) : undefined;

/** `host:port`, or undefined when neither is known. */
export function hostPort(host: unknown, port: unknown): string | undefined {
  const name = typeof host === 'string' && host !== '' ? host : undefined;
  const number = typeof port === 'number' || (typeof port === 'string' && port !== '') ? String(port) : undefined;
  if (name === undefined && number === undefined) return undefined;
  return `${name ?? 'localhost'}${number === undefined ? '' : `:${number}`}`;
}

/** The host:port of a URL (`redis://user:secret@h:6379/0` gives `h:6379`), or undefined if it does not parse. */
export function urlAddress(url: string): string | undefined {
  try {
    const parsed = new URL(url.includes('://') ? url : `tcp://${url}`);
    return parsed.host === '' ? undefined : parsed.host;
  } catch {
    return undefined;
  }
}

/** Several addresses as one: `h1:2379, h2:2379`. */
export function joinAddresses(addresses: readonly (string | undefined)[]): string | undefined {
  const known = addresses.filter((address): address is string => address !== undefined);
  return known.length === 0 ? undefined : known.join(', ');
}

/** A plain ioredis client's host:port, a Sentinel client's sentinels and master name, a Cluster's startup nodes. */
export function redisAddress(client: unknown): string | undefined {
  const bag = asBag(client);
  const options = asBag(bag?.options);
  if (bag?.isCluster === true) {
    const nodes = Array.isArray(bag.startupNodes) ? bag.startupNodes : [];
    return joinAddresses(
      nodes.map((node) =>
        typeof node === 'string' ? urlAddress(node) : hostPort(asBag(node)?.host, asBag(node)?.port),
      ),
    );
  }
  if (!options) return undefined;
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0) {
    const sentinels = joinAddresses(options.sentinels.map((node) => hostPort(asBag(node)?.host, asBag(node)?.port)));
    return `sentinels ${sentinels ?? '?'} (master ${typeof options.name === 'string' ? options.name : 'mymaster'})`;
  }
  if (typeof options.path === 'string') return options.path;
  return hostPort(options.host, options.port);
}

/** A `pg` Pool's or Client's host:port, from its connection string or its host and port. */
export function postgresAddress(settings: unknown): string | undefined {
  const options = asBag(settings);
  if (!options) return undefined;
  if (typeof options.connectionString === 'string') return urlAddress(options.connectionString);
  return hostPort(options.host ?? 'localhost', options.port ?? 5432);
}

/** A `mysql2` promise pool's host:port (its inner pool's connection config). */
export function mysqlAddress(pool: unknown): string | undefined {
  const inner = asBag(asBag(pool)?.pool) ?? asBag(pool);
  const config = asBag(asBag(inner?.config)?.connectionConfig);
  if (!config) return undefined;
  if (typeof config.socketPath === 'string') return config.socketPath;
  return hostPort(config.host, config.port);
}
