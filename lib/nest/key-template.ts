import { assertKey, describe } from '../engine/lock-options.js';
import { InvalidLockArgumentError } from '../errors.js';
import { Messages } from './lock.messages.js';

/**
 * The parts of a handler call a key template may name: an HTTP request's `params`, `query`, `body`
 * and `headers`; a microservice or WebSocket message's `data` (its payload); a GraphQL call's `args`.
 */
export interface KeyParts {
  /** HTTP route parameters (`{params.id}`). */
  readonly params?: unknown;
  /** HTTP query string (`{query.page}`). */
  readonly query?: unknown;
  /** HTTP request body (`{body.orderId}`). */
  readonly body?: unknown;
  /** HTTP request headers (`{headers.x-tenant}`). */
  readonly headers?: unknown;
  /** A microservice or WebSocket message payload (`{data.id}`). */
  readonly data?: unknown;
  /** A GraphQL resolver's arguments (`{args.id}`). */
  readonly args?: unknown;
}

/** A `@Locked()` key: a template such as `'order:{0.id}'`, or a function of the method's arguments. */
export type LockKey = string | ((...args: any[]) => string);

/** What `@Locked()` takes as its key: one key, or a list of them for a lock on all those keys (a `MultiLock`). */
export type LockKeys = LockKey | readonly LockKey[];

const CONTEXT_PARTS = ['params', 'query', 'body', 'headers', 'data', 'args'] as const;
type ContextPart = (typeof CONTEXT_PARTS)[number];

/** `{1.id}`: argument 1, then its `id`; `{params.sku}`: the HTTP request's `params.sku`. */
interface Placeholder {
  readonly name: string;
  readonly source: number | ContextPart;
  readonly path: readonly string[];
}

/** Builds a key (or, from a key list, the keys) from a call: `this`, the arguments, and the handler call's parts when Nest called the method as a handler. */
export interface KeyResolver<K extends string | string[] = string | string[]> {
  (self: unknown, args: readonly unknown[], parts: KeyParts | undefined): K;
  /** The template names parts of the handler call (request, message, GraphQL args), which only a handler call has. */
  readonly usesContext: boolean;
}

/**
 * Compiles a key once, when the decorator is applied; throws InvalidLockArgumentError for a key
 * that can never work. `{{` and `}}` stand for literal braces.
 */
export function compileLockKey(key: unknown, where: string): KeyResolver {
  return Array.isArray(key) ? compileKeyList(key, where) : compileOne(key, where);
}

/** Each element as one key; the engine dedupes and orders the keys it gets. */
function compileKeyList(keys: readonly unknown[], where: string): KeyResolver<string[]> {
  if (keys.length === 0) throw new InvalidLockArgumentError(Messages.keyListEmpty(where));
  const resolvers = keys.map((key, index) => {
    if (typeof key !== 'function' && (typeof key !== 'string' || key.length === 0)) {
      throw new InvalidLockArgumentError(Messages.keyListElement(where, index, describe(key)));
    }
    return compileOne(key, where);
  });
  return resolver(resolvers.some((one) => one.usesContext), (self, args, parts) => resolvers.map((one) => one(self, args, parts)));
}

function compileOne(key: unknown, where: string): KeyResolver<string> {
  if (typeof key === 'function') return resolver(false, (self, args) => checkFunctionResult(key.apply(self, args), where));
  if (typeof key !== 'string' || key.length === 0) throw new InvalidLockArgumentError(Messages.keyType(where, describe(key)));
  const parts = parseTemplate(key, where);
  if (parts.length === 1 && typeof parts[0] === 'string') {
    const literal = parts[0];
    checkKey(literal, where);
    return resolver(false, () => literal);
  }
  const usesContext = parts.some((part) => typeof part !== 'string' && typeof part.source === 'string');
  return resolver(usesContext, (_self, args, context) => {
    let result = '';
    for (const part of parts) result += typeof part === 'string' ? part : interpolate(part, args, context, key, where);
    return result;
  });
}

function resolver<K extends string | string[]>(usesContext: boolean, fn: (self: unknown, args: readonly unknown[], parts: KeyParts | undefined) => K): KeyResolver<K> {
  return Object.assign(fn, { usesContext });
}

function parseTemplate(template: string, where: string): (string | Placeholder)[] {
  const parts: (string | Placeholder)[] = [];
  let literal = '';
  for (let i = 0; i < template.length; i++) {
    const char = template[i];
    if ((char === '{' || char === '}') && template[i + 1] === char) {
      literal += char;
      i++;
    } else if (char === '{') {
      const end = template.indexOf('}', i + 1);
      const name = end < 0 ? '' : template.slice(i + 1, end);
      if (end < 0 || name.includes('{')) throw syntax(template, where, `"{" at ${i} is not closed (write "{{" for a literal brace)`);
      if (literal) parts.push(literal);
      literal = '';
      parts.push(parsePlaceholder(name, template, where));
      i = end;
    } else if (char === '}') {
      throw syntax(template, where, `"}" at ${i} has no "{" (write "}}" for a literal brace)`);
    } else {
      literal += char;
    }
  }
  if (literal || parts.length === 0) parts.push(literal);
  return parts;
}

function parsePlaceholder(name: string, template: string, where: string): Placeholder {
  const [root, ...path] = name.split('.');
  if (path.some((segment) => segment === '') || root === '') throw syntax(template, where, `{${name}} has an empty name or path segment`);
  if (/^\d+$/.test(root)) return { name, source: Number(root), path };
  if (!(CONTEXT_PARTS as readonly string[]).includes(root)) {
    throw syntax(template, where, `{${name}} is neither an argument ({0}, {1.id}) nor a part of a handler call (${CONTEXT_PARTS.map((p) => `{${p}.x}`).join(', ')})`);
  }
  if (path.length === 0) throw syntax(template, where, `{${name}} names the whole ${root}; name a field, e.g. {${root}.id}`);
  // Node lower-cases incoming header names.
  return { name, source: root as ContextPart, path: root === 'headers' ? [path[0].toLowerCase(), ...path.slice(1)] : path };
}

function interpolate(placeholder: Placeholder, args: readonly unknown[], context: KeyParts | undefined, template: string, where: string): string {
  const { source, name } = placeholder;
  if (typeof source === 'string') {
    if (!context) throw new InvalidLockArgumentError(Messages.templateNoHandlerCall(where, template, name));
    if (!(source in context)) throw new InvalidLockArgumentError(Messages.templateNoPart(where, template, name, Object.keys(context)));
  }
  let value: unknown = typeof source === 'number' ? args[source] : context![source];
  for (const segment of placeholder.path) {
    if (value === null || value === undefined) break;
    value = (value as Record<string, unknown>)[segment];
  }
  switch (typeof value) {
    case 'string':
      if (value === '') throw new InvalidLockArgumentError(Messages.templateMissing(where, template, name, 'an empty string'));
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidLockArgumentError(Messages.templateNotScalar(where, template, name, String(value)));
      return String(value);
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      throw new InvalidLockArgumentError(Messages.templateMissing(where, template, name, 'missing (undefined)'));
    default:
      if (value === null) throw new InvalidLockArgumentError(Messages.templateMissing(where, template, name, 'null'));
      throw new InvalidLockArgumentError(Messages.templateNotScalar(where, template, name, typeof value === 'function' ? 'a function' : describe(value)));
  }
}

function checkFunctionResult(key: unknown, where: string): string {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidLockArgumentError(Messages.keyFunctionResult(where, describe(key)));
  return key;
}

function checkKey(key: string, where: string): void {
  try {
    assertKey(key);
  } catch (error) {
    throw new InvalidLockArgumentError(Messages.lockedOption(where, (error as Error).message));
  }
}

function syntax(template: string, where: string, problem: string): InvalidLockArgumentError {
  return new InvalidLockArgumentError(Messages.templateSyntax(where, template, problem));
}
