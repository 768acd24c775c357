import { assertKey, describe } from '../../engine/lock-options.js';
import { InvalidLockArgumentError } from '../../errors.js';
import { Messages } from '../lock-messages.js';

/**
 * The parts of a handler call a key template may name: an HTTP request's `params`, `query`, `body`
 * and `headers`; a microservice or WebSocket message's `data` (its payload); a GraphQL call's
 * `args`. Each is read from the handler's parameter that carries it (`@Param('id')`, `@Body()`,
 * `@Payload()`, `@Args()`...), after pipes.
 */
export type RequestPart = 'params' | 'query' | 'body' | 'headers' | 'data' | 'args';

/** A `@Locked()` key: a template such as `'order:{0.id}'`, or a function of the method's arguments. */
export type LockKey = string | ((...args: any[]) => string);

/** What `@Locked()` takes as its key: one key, or a list of them for a lock on all those keys (a `MultiLock`). */
export type LockKeys = LockKey | readonly LockKey[];

const REQUEST_PARTS: readonly RequestPart[] = ['params', 'query', 'body', 'headers', 'data', 'args'];

/** `{1.id}`: argument 1, then its `id`; `{params.sku}`: the request's `params.sku`, wherever a parameter carries it. */
interface Placeholder {
  readonly name: string;
  readonly source: number | RequestPart;
  readonly path: readonly string[];
}

/** A placeholder naming a part of a request or message. */
export type RequestPlaceholder = Placeholder & { readonly source: RequestPart };

/** Where a value is in a call: argument `index`, then `path` into it. */
export interface ArgumentPath {
  readonly index: number;
  readonly path: readonly string[];
}

/** One key as written, checked: a template's literal text and placeholders, or a function. */
type ParsedKey =
  { readonly template: string; readonly pieces: readonly (string | Placeholder)[] } | { readonly fn: Function };

/** A key, or a key list, as written and checked: {@link parseLockKey}. */
export type ParsedKeys = ParsedKey | readonly ParsedKey[];

/** Builds a key (from a key list: the keys) from a call: `this` and the arguments. */
export type KeyResolver<K extends string | string[] = string | string[]> = (
  self: unknown,
  args: readonly unknown[],
) => K;

/**
 * Checks a key when the decorator is applied: throws InvalidLockArgumentError for one that can
 * never work. `{{` and `}}` stand for literal braces.
 */
export function parseLockKey(key: unknown, where: string): ParsedKeys {
  if (!Array.isArray(key)) return parseOne(key, where);
  if (key.length === 0) throw new InvalidLockArgumentError(Messages.keyListEmpty(where));
  return key.map((one: unknown, index) => {
    if (typeof one !== 'function' && (typeof one !== 'string' || one.length === 0)) {
      throw new InvalidLockArgumentError(Messages.keyListElement(where, index, describe(one)));
    }
    return parseOne(one, where);
  });
}

/**
 * The resolver of a parsed key, once the handler is known: `locate` says which argument carries
 * each request part (and throws InvalidLockArgumentError when none does).
 */
export function bindLockKey(
  parsed: ParsedKeys,
  where: string,
  locate: (placeholder: RequestPlaceholder, template: string) => ArgumentPath,
): KeyResolver {
  if (!isKeyList(parsed)) return bindOne(parsed, where, locate);
  // Each element as one key; the engine dedupes and orders the keys it gets.
  const resolvers = parsed.map((one) => bindOne(one, where, locate));
  return (self, args) => resolvers.map((one) => one(self, args));
}

const isKeyList = (parsed: ParsedKeys): parsed is readonly ParsedKey[] => Array.isArray(parsed);

function parseOne(key: unknown, where: string): ParsedKey {
  if (typeof key === 'function') return { fn: key };
  if (typeof key !== 'string' || key.length === 0)
    throw new InvalidLockArgumentError(Messages.keyType(where, describe(key)));
  const pieces = parseTemplate(key, where);
  if (pieces.length === 1 && typeof pieces[0] === 'string') checkKey(pieces[0], where);
  return { template: key, pieces };
}

function bindOne(
  parsed: ParsedKey,
  where: string,
  locate: (placeholder: RequestPlaceholder, template: string) => ArgumentPath,
): KeyResolver<string> {
  if ('fn' in parsed) {
    const fn = parsed.fn;
    return (self, args) => checkFunctionResult(fn.apply(self, args), where);
  }
  const { template, pieces } = parsed;
  if (pieces.length === 1 && typeof pieces[0] === 'string') {
    const literal = pieces[0];
    return () => literal;
  }
  const bound = pieces.map((piece) =>
    typeof piece === 'string'
      ? piece
      : {
          name: piece.name,
          ...(typeof piece.source === 'number'
            ? { index: piece.source, path: piece.path }
            : locate(piece as RequestPlaceholder, template)),
        },
  );
  return (_self, args) => {
    let result = '';
    for (const piece of bound) result += typeof piece === 'string' ? piece : interpolate(piece, args, template, where);
    return result;
  };
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
      if (end < 0 || name.includes('{'))
        throw syntax(template, where, `"{" at ${i} is not closed (write "{{" for a literal brace)`);
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
  if (path.some((segment) => segment === '') || root === '')
    throw syntax(template, where, `{${name}} has an empty name or path segment`);
  if (/^\d+$/.test(root)) return { name, source: Number(root), path };
  if (!(REQUEST_PARTS as readonly string[]).includes(root)) {
    throw syntax(
      template,
      where,
      `{${name}} is neither an argument ({0}, {1.id}) nor a part of a handler call (${REQUEST_PARTS.map((p) => `{${p}.x}`).join(', ')})`,
    );
  }
  if (path.length === 0)
    throw syntax(template, where, `{${name}} names the whole ${root}; name a field, e.g. {${root}.id}`);
  // Node lower-cases incoming header names.
  return {
    name,
    source: root as RequestPart,
    path: root === 'headers' ? [path[0].toLowerCase(), ...path.slice(1)] : path,
  };
}

function interpolate(
  placeholder: { readonly name: string } & ArgumentPath,
  args: readonly unknown[],
  template: string,
  where: string,
): string {
  const { name } = placeholder;
  let value: unknown = args[placeholder.index];
  for (const segment of placeholder.path) {
    if (value === null || value === undefined) break;
    value = (value as Record<string, unknown>)[segment];
  }
  switch (typeof value) {
    case 'string':
      if (value === '')
        throw new InvalidLockArgumentError(Messages.templateMissing(where, template, name, 'an empty string'));
      return value;
    case 'number':
      if (!Number.isFinite(value))
        throw new InvalidLockArgumentError(Messages.templateNotScalar(where, template, name, String(value)));
      return String(value);
    case 'bigint':
    case 'boolean':
      return String(value);
    case 'undefined':
      throw new InvalidLockArgumentError(Messages.templateMissing(where, template, name, 'missing (undefined)'));
    default:
      if (value === null) throw new InvalidLockArgumentError(Messages.templateMissing(where, template, name, 'null'));
      throw new InvalidLockArgumentError(
        Messages.templateNotScalar(where, template, name, typeof value === 'function' ? 'a function' : describe(value)),
      );
  }
}

function checkFunctionResult(key: unknown, where: string): string {
  if (typeof key !== 'string' || key.length === 0)
    throw new InvalidLockArgumentError(Messages.keyFunctionResult(where, describe(key)));
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
