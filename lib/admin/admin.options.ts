import type { CanActivate, Type } from '@nestjs/common';
import { InvalidLockArgumentError } from '../errors.js';
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
  /** The lock store to show: the `name` of a `DistributedLockModule.forRoot({ name })`. Default: the unnamed store. */
  store?: string;
}

export interface ResolvedAdminOptions {
  readonly path: string;
  readonly guards: AdminGuard[];
  readonly releaseGuards: AdminGuard[];
  readonly releaseEnabled: boolean;
  readonly store: string | undefined;
}

const PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/** Checks the options when the module is registered; throws InvalidLockArgumentError. */
export function resolveAdminOptions(options: DistributedLockAdminOptions = {}): ResolvedAdminOptions {
  if (typeof options !== 'object' || options === null) throw new InvalidLockArgumentError(`DistributedLockAdminModule options must be an object, got ${describe(options)}`);
  const path = options.path ?? '/locks';
  if (typeof path !== 'string' || !PATH.test(path)) {
    throw new InvalidLockArgumentError(`DistributedLockAdminModule: path must look like '/locks' or '/ops/locks' (letters, digits, . _ ~ -), got ${describe(path)}`);
  }
  const guards = checkGuards(options.guards, 'guards');
  const releaseGuards = checkGuards(options.releaseGuards, 'releaseGuards');
  if (options.allowUnguardedRelease !== undefined && typeof options.allowUnguardedRelease !== 'boolean') {
    throw new InvalidLockArgumentError(`DistributedLockAdminModule: allowUnguardedRelease must be a boolean, got ${describe(options.allowUnguardedRelease)}`);
  }
  return {
    path,
    guards,
    releaseGuards,
    releaseEnabled: guards.length + releaseGuards.length > 0 || options.allowUnguardedRelease === true,
    store: options.store,
  };
}

function checkGuards(value: unknown, name: string): AdminGuard[] {
  if (value === undefined) return [];
  const valid = Array.isArray(value) && value.every((guard) => typeof guard === 'function' || (typeof guard === 'object' && guard !== null && typeof (guard as CanActivate).canActivate === 'function'));
  if (!valid) throw new InvalidLockArgumentError(`DistributedLockAdminModule: ${name} must be an array of guards (classes or objects with canActivate), got ${describe(value)}`);
  return [...(value as AdminGuard[])];
}
