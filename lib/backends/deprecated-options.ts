import { InvalidLockArgumentError } from '../errors.js';
import { describe } from '../engine/lock-options.js';
import type { BackendType } from './backend-options.js';

/** An option's old name: the name it has now, and how an old value becomes a new one. */
interface Renamed {
  readonly to: string;
  readonly convert?: (value: unknown) => unknown;
}

/** Old option names, kept working (with a warning) since the stores' options share one vocabulary. */
const RENAMED: { readonly [Type in BackendType]?: Readonly<Record<string, Renamed>> } = {
  zookeeper: { connectionString: { to: 'url' } },
  etcd: { hosts: { to: 'urls' }, leaseTtlSeconds: { to: 'leaseTtlMs', convert: secondsToMs } },
  postgres: { connectionString: { to: 'url' }, pool: { to: 'client' } },
  mysql: { uri: { to: 'url' }, pool: { to: 'client' } },
};

const warned = new Set<string>();

/** Emits a DeprecationWarning with `code` once per process (Node's own channel: `--no-deprecation`, `--throw-deprecation` apply). */
export function warnDeprecatedOnce(code: string, message: string): void {
  if (warned.has(code)) return;
  warned.add(code);
  process.emitWarning(message, { type: 'DeprecationWarning', code });
}

/** The deprecated option names of the backend of `type`. */
export function deprecatedOptionNames(type: BackendType): readonly string[] {
  return Object.keys(RENAMED[type] ?? {});
}

/**
 * `options` with every deprecated name replaced by its current one (warning once per name and
 * process). Throws InvalidLockArgumentError when an option is given under both names.
 */
export function renameDeprecatedOptions<Options extends { readonly type: BackendType }>(options: Options): Options {
  const renames = RENAMED[options.type];
  if (!renames) return options;
  let renamed: Record<string, unknown> | undefined;
  for (const [old, { to, convert }] of Object.entries(renames)) {
    const value = (options as Record<string, unknown>)[old];
    if (value === undefined) continue;
    if ((options as Record<string, unknown>)[to] !== undefined) {
      throw new InvalidLockArgumentError(
        `${options.type} backend: give ${to}, not both ${to} and ${old} (its deprecated name)`,
      );
    }
    warnDeprecatedOnce(
      deprecationCode(options.type, old),
      `${options.type} backend option "${old}" is deprecated: use "${to}"${convert ? ' (in milliseconds)' : ''}`,
    );
    renamed ??= { ...options };
    delete renamed[old];
    renamed[to] = convert ? convert(value) : value;
  }
  return (renamed ?? options) as Options;
}

/** e.g. `NDL_DEP_POSTGRES_CONNECTION_STRING`. */
export function deprecationCode(type: BackendType, old: string): string {
  return `NDL_DEP_${type}_${old.replace(/[A-Z]/g, (letter) => `_${letter}`)}`.toUpperCase();
}

function secondsToMs(seconds: unknown): number {
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > 9_000_000_000) {
    throw new InvalidLockArgumentError(
      `etcd backend: leaseTtlSeconds (deprecated: use leaseTtlMs) must be a whole number of seconds >= 1, got ${describe(seconds)}`,
    );
  }
  return seconds * 1_000;
}
