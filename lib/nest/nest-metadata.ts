/** The execution contexts whose handlers get lock errors answered in their own terms (`ExecutionContext.getType()`). */
export type HandlerKind = 'http' | 'rpc' | 'ws' | 'graphql';

/**
 * @internal Nest's own metadata that this layer reads (never writes): which context a method
 * handles, which parameter carries which part of a request or message, and what a filter catches.
 * The same keys and values on Nest 11 and 12; test/nest/nest-metadata.test.ts pins them on the
 * installed Nest, and the packaging test on Nest 11.
 */
const NestMetadata = {
  /** `@Get()`, `@Post()`, `@Sse()`...: the route's path and its HTTP method. */
  path: 'path',
  method: 'method',
  /** `@MessagePattern()`, `@EventPattern()` (@nestjs/microservices). */
  pattern: 'microservices:pattern',
  /** `@SubscribeMessage()` (@nestjs/websockets). */
  messageMapping: 'websockets:message_mapping',
  /** `@Query()`, `@Mutation()`, `@Subscription()` and `@ResolveField()` (@nestjs/graphql). */
  resolverType: 'graphql:resolver_type',
  resolveProperty: 'graphql:resolve_property',
  /** Parameter decorators (`@Param()`, `@Body()`, `@Payload()`, `@MessageBody()`, `@Args()`...), on the class, per method. */
  routeArguments: '__routeArguments__',
  /** `@Catch()`'s exception types, on the filter's class or prototype. */
  catchExceptions: '__filterCatchExceptions__',
} as const;

/**
 * The type numbers of the parameter decorators key templates can name. The payload of a message
 * (`@Body()`, `@Payload()`, `@MessageBody()`, `@Args()`) is 3 in every context.
 */
export const ParamType = { request: 0, payload: 3, query: 4, params: 5, headers: 6 } as const;

/** The context Nest calls `method` in, from its metadata; undefined for a method Nest does not call as a handler. */
export function handlerKindOf(method: Function): HandlerKind | undefined {
  if (
    Reflect.getMetadata(NestMetadata.path, method) !== undefined &&
    Reflect.getMetadata(NestMetadata.method, method) !== undefined
  )
    return 'http';
  if (Reflect.getMetadata(NestMetadata.pattern, method) !== undefined) return 'rpc';
  if (Reflect.getMetadata(NestMetadata.messageMapping, method) !== undefined) return 'ws';
  if (
    Reflect.getMetadata(NestMetadata.resolverType, method) !== undefined ||
    Reflect.getMetadata(NestMetadata.resolveProperty, method) !== undefined
  )
    return 'graphql';
  return undefined;
}

/** One parameter decorator of a method: which argument, what it takes (`@Param('id')`: type 5, data `'id'`). */
export interface DecoratedParam {
  readonly index: number;
  readonly type: number;
  readonly data: unknown;
}

/** The parameter decorators of `type.prototype[name]` (custom ones left out), as Nest reads them, subclasses included. */
export function decoratedParams(type: Function, name: string | symbol): DecoratedParam[] | undefined {
  const recorded = Reflect.getMetadata(NestMetadata.routeArguments, type, name) as
    Record<string, { index: number; data?: unknown }> | undefined;
  if (!recorded) return undefined;
  return Object.entries(recorded).flatMap(([key, { index, data }]) => {
    const paramType = Number(key.split(':')[0]);
    return Number.isInteger(paramType) ? [{ index, type: paramType, data }] : [];
  });
}

/** The exception types a filter catches (`@Catch(A, B)`); empty: it catches everything. */
export function caughtTypesOf(filter: object): Function[] {
  return (Reflect.getMetadata(NestMetadata.catchExceptions, Object.getPrototypeOf(filter)) ??
    Reflect.getMetadata(NestMetadata.catchExceptions, filter.constructor) ??
    []) as Function[];
}
