import { describe } from '../engine/lock-options.js';
import { DEFAULT_STORE_NAME } from '../nest/lock-constants.js';
import { InvalidLockArgumentError } from '../errors.js';
import { copyMetadata } from '../nest/locked/copy-metadata.js';
import { lockRegistry } from '../nest/locked/lock-registry.js';
import { LeaderMessages } from './leader-messages.js';
import { leaderRegistry } from './leader-service.js';

/**
 * Metadata key under which `@OnLeadership()` and `@LeaderOnly()` record what they ask for on the
 * method: an array of {@link LeadershipMetadata}, outermost decorator last.
 */
export const LEADERSHIP_METADATA = 'distributed-lock:leadership';

/** What one `@OnLeadership()` (`task`) or `@LeaderOnly()` (`guard`) asks for. */
interface LeadershipMetadata {
  /** `'task'` for `@OnLeadership`, `'guard'` for `@LeaderOnly`. */
  readonly kind: 'task' | 'guard';
  /** The leadership name. */
  readonly name: string;
  /** The `DistributedLockModule` store whose locks elect the leader. */
  readonly store: string;
}

/** Options of `@OnLeadership()` and `@LeaderOnly()`. */
export interface LeadershipDecoratorOptions {
  /** The name of the `DistributedLockModule.forRoot({ name })` store to elect in; default the unnamed one. */
  store?: string;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Runs the method as the leader's long-running task of leadership `name`: from application
 * bootstrap, every instance campaigns, and the leader calls the method with the `Leadership`
 * (`term`, `signal`, `since`) as its only argument. When it returns, the instance resigns and
 * campaigns again; on shutdown the leader resigns first. Several methods of one name run together
 * under one leadership. The method itself is left as it is (no wrapper, no parameter added).
 *
 * ```ts
 * @OnLeadership('stock-watcher')
 * async watch({ term, signal }: Leadership) { while (!signal.aborted) await this.check(term); }
 * ```
 */
export function OnLeadership(name: string, options?: LeadershipDecoratorOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const where = whereOf(target, propertyKey);
    const method = checkMethod('@OnLeadership()', where, descriptor?.value);
    record(method, { kind: 'task', ...checkArgs('@OnLeadership()', where, name, options) });
    return descriptor;
  };
}

/**
 * Runs the method only on the current leader of `name`; elsewhere the call resolves `undefined`
 * without running it. For `@Cron` / `@Interval` jobs and queue consumers that must run on one
 * instance. Every instance campaigns for `name` from bootstrap (sharing the leadership of any
 * `@OnLeadership(name)` method). `LeaderService.leadership(name)` gives the term inside. The
 * decorated method becomes async; its other metadata is kept, in any order with other decorators.
 */
export function LeaderOnly(name: string, options?: LeadershipDecoratorOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const where = whereOf(target, propertyKey);
    const original = checkMethod('@LeaderOnly()', where, descriptor?.value);
    const { name: leadership, store } = checkArgs('@LeaderOnly()', where, name, options);
    const leaderOnly = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const leaders = leaderRegistry.get(lockRegistry.engineFor(this, where, store));
      if (!leaders) throw new InvalidLockArgumentError(LeaderMessages.noLeaderService(where, store));
      if (!leaders.isLeader(leadership)) return undefined;
      return original.apply(this, args);
    };
    Object.defineProperty(leaderOnly, 'name', { value: original.name });
    Object.defineProperty(leaderOnly, 'length', { value: original.length });
    copyMetadata(original, leaderOnly);
    record(leaderOnly, { kind: 'guard', name: leadership, store });
    descriptor.value = leaderOnly as typeof descriptor.value;
    return descriptor;
  };
}

/** The leadership metadata of a method, if any. */
export function leadershipMetadataOf(method: unknown): readonly LeadershipMetadata[] {
  if (typeof method !== 'function') return [];
  const recorded: unknown = Reflect.getOwnMetadata(LEADERSHIP_METADATA, method);
  return Array.isArray(recorded) ? (recorded as LeadershipMetadata[]) : [];
}

function record(method: object, entry: LeadershipMetadata): void {
  Reflect.defineMetadata(LEADERSHIP_METADATA, [...leadershipMetadataOf(method), entry], method);
}

function whereOf(target: object, propertyKey: string | symbol): string {
  const className = typeof target === 'function' ? target.name : target.constructor.name;
  return `${className}.${String(propertyKey)}`;
}

function checkMethod(decorator: string, where: string, value: unknown): Method {
  if (typeof value !== 'function')
    throw new InvalidLockArgumentError(LeaderMessages.decoratorNotAMethod(decorator, where));
  return value as Method;
}

function checkArgs(
  decorator: string,
  where: string,
  name: unknown,
  options: LeadershipDecoratorOptions | undefined,
): { name: string; store: string } {
  if (typeof name !== 'string' || name.length === 0)
    throw new InvalidLockArgumentError(LeaderMessages.decoratorName(decorator, where, describe(name)));
  const store = options?.store ?? DEFAULT_STORE_NAME;
  if (typeof store !== 'string' || store.length === 0)
    throw new InvalidLockArgumentError(LeaderMessages.decoratorStore(decorator, where, describe(store)));
  return { name, store };
}
