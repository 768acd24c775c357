/** Why a store could not be used, as far as its driver's error tells. */
type FailureCause = 'refused' | 'timeout' | 'auth' | 'dns' | 'unreachable';

/** What the CLI prints for each cause (after the store's address). */
export const CAUSE_TEXT: Record<FailureCause, string> = {
  refused: 'connection refused',
  timeout: 'timed out',
  auth: 'authentication failed',
  dns: 'host name not found (DNS)',
  unreachable: 'host or network unreachable',
};

/** A recognised cause, and the driver's words for it (a code like ECONNREFUSED, or its message). */
export interface Diagnosis {
  readonly cause: FailureCause;
  readonly detail: string;
}

const CODES: Record<string, FailureCause> = {
  ECONNREFUSED: 'refused',
  ETIMEDOUT: 'timeout',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  EAI_NONAME: 'dns',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  // PostgreSQL: invalid_password, invalid_authorization_specification (no pg_hba.conf entry, unknown role).
  '28P01': 'auth',
  '28000': 'auth',
  // MySQL / MariaDB.
  ER_ACCESS_DENIED_ERROR: 'auth',
  ER_DBACCESS_DENIED_ERROR: 'auth',
};

/** Patterns in messages, for drivers that fold the cause into text (ioredis replies, gRPC statuses, ZooKeeper). */
const MESSAGES: readonly [RegExp, FailureCause][] = [
  [/\bECONNREFUSED\b/, 'refused'],
  [/\b(ENOTFOUND|EAI_AGAIN|EAI_NONAME)\b|Name resolution failed|getaddrinfo/i, 'dns'],
  [/\b(EHOSTUNREACH|ENETUNREACH)\b/, 'unreachable'],
  [
    /\bNOAUTH\b|\bWRONGPASS\b|invalid username-password|Authentication required|password authentication failed|Access denied for user|authentication failed|user name is empty|invalid auth token|UNAUTHENTICATED|AUTH_FAILED|NO_AUTH/i,
    'auth',
  ],
  [/\bETIMEDOUT\b|timed out|timeout|within \d+ ?ms|DEADLINE_EXCEEDED/i, 'timeout'],
];

/** The first cause an error, its `cause` chain or an AggregateError's errors name; undefined when none does. */
export function diagnose(error: unknown, seen = new Set<unknown>()): Diagnosis | undefined {
  if (typeof error !== 'object' || error === null || seen.has(error)) return undefined;
  seen.add(error);
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && Object.hasOwn(CODES, code))
    return { cause: CODES[code], detail: typeof message === 'string' && message !== '' ? message : code };
  const nested = [
    (error as { cause?: unknown }).cause,
    ...(error instanceof AggregateError ? (error.errors as unknown[]) : []),
  ];
  for (const inner of nested) {
    const found = diagnose(inner, seen);
    if (found) return found;
  }
  if (typeof message !== 'string') return undefined;
  const match = MESSAGES.find(([pattern]) => pattern.test(message));
  return match && { cause: match[1], detail: message };
}
