import { parseArgs } from 'node:util';
import type { BackendOptions } from '../backends/backend-options.js';

/** What one CLI run was asked to do. */
export interface CliCommand {
  readonly action: 'list' | 'inspect' | 'release';
  /** The lock key (inspect, release) or the key prefix to list (list; optional). */
  readonly target?: string;
  readonly backend: BackendOptions;
  readonly keyPrefix?: string;
  readonly json: boolean;
  readonly yes: boolean;
  readonly reason?: string;
  readonly limit?: number;
  readonly cursor?: string;
  /** list: follow the pages to the end (at most MAX_LISTED locks). */
  readonly all: boolean;
}

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

export const USAGE = `Usage: nestjs-distributed-lock <command> [key or prefix] <store> [options]

Commands:
  list [PREFIX]       held (or waited-for) locks whose key starts with PREFIX
  inspect KEY         who holds KEY: instance, label, fence, remaining lease, waiters
  release KEY         force-release KEY whoever holds it (asks first; --yes to skip)

Store (one of):
  --redis URL             redis://127.0.0.1:6379
  --redlock URL,URL,...   independent Redis masters
  --postgres URL          postgres://user:pass@host/db   (--table NAME if not the default)
  --mysql URL             mysql://user:pass@host/db      (--table NAME if not the default)
  --etcd URL[,URL...]     http://127.0.0.1:2379
  --zookeeper HOSTS       127.0.0.1:2181[,host:port...]  (--root-path PATH if not the default)

Options:
  --prefix P      the app's keyPrefix (default 'lock:')
  --json          machine-readable output
  --limit N       locks per page for list (default 100)
  --cursor C      continue a list from the cursor a page printed
  --all           list every page (up to 10000 locks)
  --reason TEXT   why, for release (recorded in the force-released event)
  --yes           release without asking
`;

const OPTIONS = {
  redis: { type: 'string' },
  redlock: { type: 'string' },
  postgres: { type: 'string' },
  mysql: { type: 'string' },
  etcd: { type: 'string' },
  zookeeper: { type: 'string' },
  table: { type: 'string' },
  'root-path': { type: 'string' },
  prefix: { type: 'string' },
  json: { type: 'boolean', default: false },
  yes: { type: 'boolean', short: 'y', default: false },
  reason: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Parses the command line; throws UsageError (or returns `'help'`). */
export function parseCliArgs(argv: readonly string[]): CliCommand | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return 'help';
  const [action, target, ...extra] = positionals;
  if (action !== 'list' && action !== 'inspect' && action !== 'release') throw new UsageError(`unknown command ${JSON.stringify(action)}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (action !== 'list' && (target === undefined || target === '')) throw new UsageError(`${action} needs a KEY`);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new UsageError('--limit takes a whole number >= 1');
  return {
    action,
    target,
    backend: backendOf(values),
    keyPrefix: values.prefix,
    json: values.json,
    yes: values.yes,
    reason: values.reason,
    limit,
    cursor: values.cursor,
    all: values.all,
  };
}

function backendOf(values: Record<string, string | boolean | undefined>): BackendOptions {
  const given = ['redis', 'redlock', 'postgres', 'mysql', 'etcd', 'zookeeper'].filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw new UsageError(given.length === 0 ? 'name the store: --redis, --redlock, --postgres, --mysql, --etcd or --zookeeper' : `one store at a time, got --${given.join(', --')}`);
  const value = String(values[given[0]!]);
  const table = values.table === undefined ? {} : { table: String(values.table) };
  switch (given[0]) {
    case 'redis':
      return { type: 'redis', url: value };
    case 'redlock':
      return { type: 'redlock', urls: value.split(',') };
    case 'postgres':
      return { type: 'postgres', connectionString: value, ...table };
    case 'mysql':
      return { type: 'mysql', uri: value, ...table };
    case 'etcd':
      return { type: 'etcd', hosts: value.split(',') };
    default:
      return { type: 'zookeeper', connectionString: value, ...(values['root-path'] === undefined ? {} : { rootPath: String(values['root-path']) }) };
  }
}
