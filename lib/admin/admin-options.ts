import type { CanActivate, Type } from '@nestjs/common';
import { InvalidLockArgumentError } from '../errors.js';
import { checkKnownFields } from '../util/known-fields.js';
import { describe } from '../engine/lock-options.js';

/** A Nest guard: a class (resolved by Nest, with its dependencies) or an instance. */
export type AdminGuard = Type<CanActivate> | CanActivate;

/** Options of `DistributedLockAdminModule.register()`. */
export interface DistributedLockAdminOptions {
  /** Where the page is served; its JSON endpoints are under `<path>/api/`. Default `'/locks'`. */
  path?: string;
  /** Guards in front of every route: the page, the JSON endpoints, the event stream and release. */
  guards?: AdminGuard[];
  /** Further guards in front of release only (e.g. an admin role, where `guards` let every operator look). */
  releaseGuards?: AdminGuard[];
  /**
   * Serve the release endpoint with no guard at all. Off by default: without any guard, release
   * answers 403 and the page shows its button disabled. Only for apps that guard the path elsewhere.
   */
  allowUnguardedRelease?: boolean;
  /**
   * The lock store shown first: the `name` of a `DistributedLockModule.forRoot({ name })`. Default:
   * the unnamed store. The page offers every store of the app (`?store=` on the JSON endpoints).
   */
  store?: string;
  /** A page that only looks: no release endpoint is registered at all (404), and no Release button. */
  readOnly?: boolean;
  /**
   * Who is releasing, for the audit: called with the platform's request (Express `Request`, Fastify
   * `FastifyRequest`, after your guards ran). Its answer is the `actor` of the `force-released` event.
   *
   * ```ts
   * actor: (request: Request & { user?: { email: string } }) => request.user?.email
   * ```
   */
  actor?(request: unknown): string | undefined;
}

export interface ResolvedAdminOptions {
  readonly path: string;
  readonly guards: AdminGuard[];
  readonly releaseGuards: AdminGuard[];
  /** Release answers (a guard protects it, or the app opted out of that). */
  readonly releaseEnabled: boolean;
  readonly readOnly: boolean;
  readonly store: string | undefined;
  readonly actor: ((request: unknown) => string | undefined) | undefined;
}

const OPTION_NAMES = Object.keys({
  path: true,
  guards: true,
  releaseGuards: true,
  allowUnguardedRelease: true,
  store: true,
  readOnly: true,
  actor: true,
} satisfies Record<keyof DistributedLockAdminOptions, true>);

const PATH = /^(\/[A-Za-z0-9._~-]+)+$/;
const WHERE = 'DistributedLockAdminModule.register()';

/** Checks the options when the module is registered; throws InvalidLockArgumentError naming the option. */
export function resolveAdminOptions(options: DistributedLockAdminOptions = {}): ResolvedAdminOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidLockArgumentError(`${WHERE}: options must be an object, got ${describe(options)}`);
  checkKnownFields(options, OPTION_NAMES, WHERE);
  const path = options.path ?? '/locks';
  if (typeof path !== 'string' || !PATH.test(path)) {
    throw new InvalidLockArgumentError(
      `${WHERE}: path must look like '/locks' or '/ops/locks' (letters, digits, . _ ~ -), got ${describe(path)}`,
    );
  }
  const guards = checkGuards(options.guards, 'guards');
  const releaseGuards = checkGuards(options.releaseGuards, 'releaseGuards');
  const allowUnguardedRelease = checkBoolean(options.allowUnguardedRelease, 'allowUnguardedRelease');
  const readOnly = checkBoolean(options.readOnly, 'readOnly');
  if (options.store !== undefined && (typeof options.store !== 'string' || options.store.length === 0)) {
    throw new InvalidLockArgumentError(`${WHERE}: store must be the name of a store, got ${describe(options.store)}`);
  }
  if (options.actor !== undefined && typeof options.actor !== 'function') {
    throw new InvalidLockArgumentError(
      `${WHERE}: actor must be a function (request) => string | undefined, got ${describe(options.actor)}`,
    );
  }
  return {
    path,
    guards,
    releaseGuards,
    releaseEnabled: !readOnly && (guards.length + releaseGuards.length > 0 || allowUnguardedRelease),
    readOnly,
    store: options.store,
    actor: options.actor,
  };
}

function checkBoolean(value: unknown, name: string): boolean {
  if (value !== undefined && typeof value !== 'boolean')
    throw new InvalidLockArgumentError(`${WHERE}: ${name} must be a boolean, got ${describe(value)}`);
  return value === true;
}

function checkGuards(value: unknown, name: string): AdminGuard[] {
  if (value === undefined) return [];
  const valid =
    Array.isArray(value) &&
    value.every(
      (guard) =>
        typeof guard === 'function' ||
        (typeof guard === 'object' && guard !== null && typeof (guard as CanActivate).canActivate === 'function'),
    );
  if (!valid)
    throw new InvalidLockArgumentError(
      `${WHERE}: ${name} must be an array of guards (classes or objects with canActivate), got ${describe(value)}`,
    );
  return [...(value as AdminGuard[])];
}
