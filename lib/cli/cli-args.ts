import { parseArgs } from 'node:util';
import type { BackendOptions } from '../backends/backend-options.js';
import { MAX_LIST_LIMIT } from '../engine/lock-inspector.js';

/** What one CLI run was asked to do. */
export interface CliCommand {
  readonly action: 'list' | 'inspect' | 'release';
  /** The lock key (inspect, release) or the filter: listed keys start with it (list; optional). */
  readonly target?: string;
  readonly backend: BackendOptions;
  /** The app's `keyPrefix` module option (`--key-prefix`). */
  readonly keyPrefix?: string;
  readonly json: boolean;
  readonly yes: boolean;
  readonly reason?: string;
  readonly limit?: number;
  readonly cursor?: string;
  /** list: follow the pages to the end (at most MAX_LISTED locks). */
  readonly all: boolean;
  /** list --watch: milliseconds between refreshes; absent without --watch. */
  readonly watchMs?: number;
}

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

const DEFAULT_INTERVAL_SECONDS = 2;
const MIN_INTERVAL_SECONDS = 0.1;
const MAX_INTERVAL_SECONDS = 3_600;

const OPTIONS = {
  redis: { type: 'string' },
  redlock: { type: 'string' },
  postgres: { type: 'string' },
  mysql: { type: 'string' },
  etcd: { type: 'string' },
  zookeeper: { type: 'string' },
  table: { type: 'string' },
  'root-path': { type: 'string' },
  'key-prefix': { type: 'string' },
  json: { type: 'boolean', default: false },
  yes: { type: 'boolean', short: 'y', default: false },
  reason: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean', default: false },
  watch: { type: 'boolean', default: false },
  interval: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Parses the command line; throws UsageError (or returns `'help'` for --help). */
export function parseCliArgs(argv: readonly string[]): CliCommand | 'help' {
  refuseRenamedPrefix(argv);
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseErrorMessage(error as Error & { code?: string }));
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length === 0) throw new UsageError('name a command: list, inspect or release');
  const [action, target, ...extra] = positionals;
  if (action !== 'list' && action !== 'inspect' && action !== 'release')
    throw new UsageError(`unknown command ${JSON.stringify(action)}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (action !== 'list' && (target === undefined || target === '')) throw new UsageError(`${action} needs a KEY`);
  if (action !== 'list') refuseListOnly(values);
  if (!values.watch && values.interval !== undefined) throw new UsageError('--interval goes with --watch');
  return {
    action,
    target,
    backend: backendOf(values),
    keyPrefix: values['key-prefix'],
    json: values.json,
    yes: values.yes,
    reason: values.reason,
    limit: values.limit === undefined ? undefined : wholeNumber('--limit', values.limit, 1, MAX_LIST_LIMIT),
    cursor: values.cursor,
    all: values.all,
    ...(values.watch ? { watchMs: Math.round(1000 * seconds('--interval', values.interval)) } : {}),
  };
}

/** `--prefix` meant the app's keyPrefix, and was taken for a key filter (`list --prefix order:` listed nothing): renamed. */
function refuseRenamedPrefix(argv: readonly string[]): void {
  const end = argv.indexOf('--');
  const options = end === -1 ? argv : argv.slice(0, end);
  const at = options.findIndex((arg) => arg === '--prefix' || arg.startsWith('--prefix='));
  if (at === -1) return;
  const value = options[at].startsWith('--prefix=') ? options[at].slice('--prefix='.length) : (options[at + 1] ?? 'P');
  throw new UsageError(
    `--prefix is now --key-prefix (the app's keyPrefix option); to list the keys that start with ${value}, give it after list: \`list ${value}\``,
  );
}

function parseErrorMessage(error: Error & { code?: string }): string {
  const unknown = /^Unknown option '([^']+)'/.exec(error.message);
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) return `unknown option ${unknown[1]}`;
  const missing = /^Option '(-[^' ]+)(?: <value>)?' argument (missing|is ambiguous)/.exec(error.message);
  if (missing) return `${missing[1]} needs a value`;
  return error.message.split('\n')[0];
}

function refuseListOnly(values: { limit?: string; cursor?: string; all: boolean; watch: boolean }): void {
  const given = (['limit', 'cursor', 'all', 'watch'] as const).filter(
    (name) => values[name] !== undefined && values[name] !== false,
  );
  if (given.length > 0) throw new UsageError(`--${given[0]} goes with list`);
}

function wholeNumber(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw new UsageError(`${flag} takes a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

function seconds(flag: string, text: string | undefined): number {
  if (text === undefined) return DEFAULT_INTERVAL_SECONDS;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < MIN_INTERVAL_SECONDS || value > MAX_INTERVAL_SECONDS) {
    throw new UsageError(
      `${flag} takes seconds from ${MIN_INTERVAL_SECONDS} to ${MAX_INTERVAL_SECONDS}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

function backendOf(values: Record<string, string | boolean | undefined>): BackendOptions {
  const given = ['redis', 'redlock', 'postgres', 'mysql', 'etcd', 'zookeeper'].filter(
    (name) => values[name] !== undefined,
  );
  if (given.length !== 1)
    throw new UsageError(
      given.length === 0
        ? 'name the store: --redis, --redlock, --postgres, --mysql, --etcd or --zookeeper'
        : `one store at a time, got --${given.join(', --')}`,
    );
  const value = String(values[given[0]]);
  if (value === '') throw new UsageError(`--${given[0]} needs a value`);
  const table = values.table === undefined ? {} : { table: String(values.table) };
  switch (given[0]) {
    case 'redis':
      return { type: 'redis', url: value };
    case 'redlock':
      return { type: 'redlock', urls: value.split(',') };
    case 'postgres':
      return { type: 'postgres', url: value, ...table };
    case 'mysql':
      return { type: 'mysql', url: value, ...table };
    case 'etcd':
      return { type: 'etcd', urls: value.split(',') };
    default:
      return {
        type: 'zookeeper',
        url: value,
        ...(values['root-path'] === undefined ? {} : { rootPath: String(values['root-path']) }),
      };
  }
}
