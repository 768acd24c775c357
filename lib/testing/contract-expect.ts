import { AssertionError } from 'node:assert';
import { inspect } from 'node:util';

/**
 * The few `expect` matchers the contract suite uses, on `node:assert`'s AssertionError, so the
 * suite reads the same under any test runner and depends on none. Equality is jest's: properties
 * whose value is undefined are ignored, `toMatchObject` compares only the expected properties.
 */
export function expect(actual: unknown): Expectation {
  return new Expectation(actual, false);
}

type MatcherName = Exclude<keyof Expectation, 'not' | 'rejects' | 'resolves'>;
type Matchers<R> = { [Name in MatcherName]: (...args: Parameters<Expectation[Name]>) => R };

class Expectation {
  constructor(
    private readonly actual: unknown,
    private readonly negated: boolean,
  ) {}

  get not(): Expectation {
    return new Expectation(this.actual, !this.negated);
  }

  /** The matchers, applied to the reason the promise rejected with (fails if it fulfils). */
  get rejects(): Matchers<Promise<void>> {
    return settledMatchers(async () => {
      try {
        await this.actual;
      } catch (error) {
        return error;
      }
      throw new AssertionError({ message: 'expected the promise to reject, it fulfilled' });
    }, this.negated);
  }

  /** The matchers, applied to the value the promise fulfilled with (fails if it rejects). */
  get resolves(): Matchers<Promise<void>> {
    return settledMatchers(async () => await this.actual, this.negated);
  }

  toBe(expected: unknown): void {
    this.check(Object.is(this.actual, expected), 'to be', expected);
  }

  toEqual(expected: unknown): void {
    this.check(equals(this.actual, expected, false), 'to equal', expected);
  }

  toMatchObject(expected: unknown): void {
    this.check(equals(this.actual, expected, true), 'to match', expected);
  }

  toBeNull(): void {
    this.check(this.actual === null, 'to be', null);
  }

  toBeUndefined(): void {
    this.check(this.actual === undefined, 'to be', undefined);
  }

  toBeTruthy(): void {
    this.check(Boolean(this.actual), 'to be', 'truthy');
  }

  toBeInstanceOf(expected: abstract new (...args: never[]) => unknown): void {
    this.check(this.actual instanceof expected, 'to be an instance of', expected.name);
  }

  toBeGreaterThan(expected: number): void {
    this.check((this.actual as number) > expected, 'to be >', expected);
  }

  toBeGreaterThanOrEqual(expected: number): void {
    this.check((this.actual as number) >= expected, 'to be >=', expected);
  }

  toBeLessThan(expected: number): void {
    this.check((this.actual as number) < expected, 'to be <', expected);
  }

  toBeLessThanOrEqual(expected: number): void {
    this.check((this.actual as number) <= expected, 'to be <=', expected);
  }

  toHaveLength(expected: number): void {
    this.check((this.actual as { length?: unknown } | null)?.length === expected, 'to have length', expected);
  }

  toHaveProperty(name: string): void {
    this.check(
      typeof this.actual === 'object' && this.actual !== null && name in this.actual,
      'to have property',
      name,
    );
  }

  toContain(expected: unknown): void {
    const container = this.actual as { includes?: (item: unknown) => boolean } | null;
    this.check(typeof container?.includes === 'function' && container.includes(expected), 'to contain', expected);
  }

  toMatch(expected: RegExp | string): void {
    const text = String(this.actual);
    this.check(typeof expected === 'string' ? text.includes(expected) : expected.test(text), 'to match', expected);
  }

  /** For an error (as from `rejects`): its message contains `expected`, or it is an instance of `expected`. */
  toThrow(expected: string | RegExp | (abstract new (...args: never[]) => unknown)): void {
    const error = this.actual as { message?: unknown };
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- whatever was thrown, shown as String() shows it
    const message = String(error?.message ?? error);
    const ok =
      typeof expected === 'string'
        ? message.includes(expected)
        : expected instanceof RegExp
          ? expected.test(message)
          : error instanceof expected;
    this.check(ok, 'to be an error matching', typeof expected === 'function' ? expected.name : expected);
  }

  private check(ok: boolean, relation: string, expected: unknown): void {
    if (ok !== this.negated) return;
    throw new AssertionError({
      message: `expected ${inspect(this.actual, { depth: 6 })} ${this.negated ? 'not ' : ''}${relation} ${inspect(expected, { depth: 6 })}`,
      actual: this.actual,
      expected,
    });
  }
}

function settledMatchers(settle: () => Promise<unknown>, negated: boolean): Matchers<Promise<void>> {
  return new Proxy({} as Matchers<Promise<void>>, {
    get:
      (_target, name) =>
      async (...args: unknown[]) => {
        const expectation = new Expectation(await settle(), negated) as unknown as Record<
          PropertyKey,
          (...values: unknown[]) => void
        >;
        expectation[name](...args);
      },
  });
}

/** Jest's recursive equality; `partial`: only `expected`'s properties count (toMatchObject). */
function equals(actual: unknown, expected: unknown, partial: boolean): boolean {
  if (Object.is(actual, expected)) return true;
  if (typeof actual !== 'object' || typeof expected !== 'object' || actual === null || expected === null) return false;
  if (Array.isArray(expected)) {
    return (
      Array.isArray(actual) &&
      actual.length === expected.length &&
      expected.every((item, i) => equals(actual[i], item, partial))
    );
  }
  if (Array.isArray(actual)) return false;
  const defined = (value: object) =>
    Object.keys(value).filter((name) => (value as Record<string, unknown>)[name] !== undefined);
  const names = new Set(partial ? Object.keys(expected) : [...defined(actual), ...defined(expected)]);
  for (const name of names) {
    if (!equals((actual as Record<string, unknown>)[name], (expected as Record<string, unknown>)[name], partial))
      return false;
  }
  return true;
}
