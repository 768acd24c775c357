/** The CLI's exit codes (documented in docs/operations.md, The CLI). */
export const EXIT = {
  /** Done (a `list --watch` ended by SIGINT or SIGTERM too). */
  done: 0,
  /** The store failed (unreachable, refused the login, ...) or a release was not confirmed. */
  failed: 1,
  /** A bad command line: the usage is printed on stderr. */
  usage: 2,
} as const;

export const USAGE = `Usage: nestjs-distributed-lock <command> [filter or key] <store> [options]

Commands:
  list [FILTER]       held (or waited-for) locks whose key starts with FILTER (keys as callers give them)
  inspect KEY         who holds KEY: instance, label, fence, age, remaining lease, waiters
  release KEY         force-release KEY whoever holds it (asks first; --yes to skip)

Store (one of):
  --redis URL             redis://[:password@]127.0.0.1:6379
  --redlock URL,URL,...   independent Redis masters
  --postgres URL          postgres://user:pass@host/db   (--table NAME if not the default)
  --mysql URL             mysql://user:pass@host/db      (--table NAME if not the default)
  --etcd URL[,URL...]     http://127.0.0.1:2379
  --zookeeper HOSTS       127.0.0.1:2181[,host:port...]  (--root-path PATH if not the default)

Options:
  --key-prefix P  the app's keyPrefix module option (default 'lock:')
  --json          machine-readable output
  --limit N       locks per page for list, 1 to 1000 (default 100)
  --cursor C      continue a list from the cursor a page printed
  --all           list every page (up to 10000 locks)
  --watch         list again every --interval seconds until Ctrl-C (in place on a terminal)
  --interval S    seconds between refreshes of --watch, 0.1 to 3600 (default 2)
  --reason TEXT   why, for release (recorded in the force-released event)
  --yes           release without asking
  --help          this text

Exit codes: 0 done, 1 store failure or release not confirmed, 2 bad command line.
`;
