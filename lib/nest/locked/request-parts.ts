import { InvalidLockArgumentError } from '../../errors.js';
import type { HandlerKind } from '../nest-metadata.js';
import { Messages } from '../lock-messages.js';
import { ParamType, type DecoratedParam } from '../nest-metadata.js';
import type { ArgumentPath, RequestPart, RequestPlaceholder } from './key-template.js';

/** The parameter decorator of each HTTP request part, and the context a part belongs to. */
const HTTP_PARTS: Partial<Record<RequestPart, number>> = {
  params: ParamType.params,
  query: ParamType.query,
  body: ParamType.payload,
  headers: ParamType.headers,
};

/** Where Nest puts a message's payload when the handler has no parameter decorator: `(data, context)` in microservices, `(socket, data)` in gateways, `(root, args, ...)` in GraphQL. */
const NATIVE_PAYLOAD_INDEX: Record<Exclude<HandlerKind, 'http'>, number> = { rpc: 0, ws: 1, graphql: 1 };

/** What a handler should declare to carry a part, for the error that says what to add. */
const TO_ADD: Record<RequestPart, (field: string) => string> = {
  params: (field) => `@Param('${field}') ${field} (or @Param() params, or @Req() request)`,
  query: (field) => `@Query('${field}') ${field} (or @Query() query, or @Req() request)`,
  body: (field) => `@Body('${field}') ${field} (or @Body() body, or @Req() request)`,
  headers: (field) => `@Headers('${field}') ${field} (or @Headers() headers, or @Req() request)`,
  data: () => '@Payload() data (microservices) or @MessageBody() data (gateways)',
  args: (field) => `@Args('${field}') ${field} (or @Args() args)`,
};

/**
 * Which argument of a handler carries the request part a key template names, from the handler's
 * parameter decorators (what Nest passes after pipes): `{params.id}` is the argument of
 * `@Param('id')`, or `id` of `@Param()`'s, or `params.id` of `@Req()`'s; `{data.x}` of `@Payload()`
 * or `@MessageBody()`, or of the message itself when the handler declares no parameter; `{args.x}`
 * of `@Args()`. Throws InvalidLockArgumentError naming what to add when no parameter carries it.
 */
export function locateRequestPart(
  placeholder: RequestPlaceholder,
  kind: HandlerKind | undefined,
  params: readonly DecoratedParam[] | undefined,
  where: string,
  template: string,
): ArgumentPath {
  const { source: part, path } = placeholder;
  const field = path[0];
  const httpType = HTTP_PARTS[part];
  const inContext =
    httpType !== undefined ? kind === 'http' : part === 'args' ? kind === 'graphql' : kind === 'rpc' || kind === 'ws';
  if (!inContext || kind === undefined) {
    throw new InvalidLockArgumentError(Messages.templatePartNotInContext(where, template, placeholder.name, kind));
  }
  const type = httpType ?? ParamType.payload;
  const same = (data: unknown) =>
    typeof data === 'string' && (part === 'headers' ? data.toLowerCase() === field : data === field);
  const named = params?.find((param) => param.type === type && same(param.data));
  if (named) return { index: named.index, path: path.slice(1) };
  const whole = params?.find((param) => param.type === type && param.data === undefined);
  if (whole) return { index: whole.index, path };
  const request = kind === 'http' ? params?.find((param) => param.type === ParamType.request) : undefined;
  if (request) return { index: request.index, path: [part, ...path] };
  if (kind !== 'http' && !params?.length) return { index: NATIVE_PAYLOAD_INDEX[kind], path };
  throw new InvalidLockArgumentError(
    Messages.templatePartNotCarried(where, template, placeholder.name, TO_ADD[part](field)),
  );
}
