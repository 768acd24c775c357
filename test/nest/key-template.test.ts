import { describe, expect, it } from '@jest/globals';
import { InvalidLockArgumentError } from '../../lib/index.js';
import { bindLockKey, parseLockKey } from '../../lib/nest/locked/key-template.js';
import { locateRequestPart } from '../../lib/nest/locked/request-parts.js';

const where = 'Service.method';
const compileLockKey = (template: unknown, at: string) => parseLockKey(template, at);
/** Resolves a key for a call with `args`; a `request` is passed as one more argument, as a handler's `@Req()` parameter. */
const resolve = (template: unknown, args: unknown[] = [], request?: object, self?: unknown) => {
  const parsed = parseLockKey(template, where);
  const params = request === undefined ? [] : [{ index: args.length, type: 0, data: undefined }];
  const resolver = bindLockKey(parsed, where, (placeholder, text) =>
    locateRequestPart(placeholder, 'http', params, where, text),
  );
  return resolver(self, request === undefined ? args : [...args, request]);
};

describe('key templates', () => {
  it('a text without braces is a literal key', () => {
    expect(resolve('jobs:nightly-report')).toBe('jobs:nightly-report');
  });

  it('{0}, {1} name arguments by position', () => {
    expect(resolve('transfer:{0}->{1}', ['a', 'b'])).toBe('transfer:a->b');
  });

  it('{1.id} and deeper dotted paths follow properties, getters included', () => {
    class Order {
      constructor(readonly customer: { id: number }) {}
      get ref() {
        return `ord-${this.customer.id}`;
      }
    }
    const order = new Order({ id: 9 });
    expect(resolve('order:{0.customer.id}:{0.ref}', [order])).toBe('order:9:ord-9');
  });

  it('interpolates strings, numbers, bigints and booleans', () => {
    expect(resolve('{0}|{1}|{2}|{3}', ['s', 1.5, 10n, false])).toBe('s|1.5|10|false');
  });

  it('{params.x}, {query.x}, {body.x}, {headers.x} name parts of the HTTP request; header names are case-insensitive', () => {
    const request = {
      params: { sku: 'A1' },
      query: { warehouse: 'north' },
      body: { order: { id: 3 } },
      headers: { 'x-tenant': 't1' },
    };
    expect(resolve('inv:{params.sku}:{query.warehouse}:{body.order.id}:{headers.X-Tenant}', [], request)).toBe(
      'inv:A1:north:3:t1',
    );
  });

  it('a request part no parameter carries is an error that says what to add', () => {
    expect(() => resolve('inv:{params.sku}', ['A1'])).toThrow(
      /names \{params\.sku\}, which no parameter of Service\.method carries: add @Param\('sku'\) sku/,
    );
  });

  it('{{ and }} are literal braces', () => {
    expect(resolve('{{literal}}:{0}', ['x'])).toBe('{literal}:x');
  });

  describe('never builds a key with undefined in it', () => {
    const cases: [string, string, unknown[], object | undefined, RegExp][] = [
      ['a missing argument', 'k:{1}', ['only-one'], undefined, /\{1\}, which is missing/],
      ['a missing property', 'k:{0.id}', [{}], undefined, /\{0\.id\}, which is missing/],
      ['a path through undefined', 'k:{0.customer.id}', [{}], undefined, /\{0\.customer\.id\}, which is missing/],
      ['null', 'k:{0}', [null], undefined, /which is null/],
      ['an empty string', 'k:{0}', [''], undefined, /which is an empty string/],
      ['an object', 'k:{0}', [{ id: 1 }], undefined, /an object/],
      ['an array', 'k:{0}', [[1, 2]], undefined, /an array/],
      ['a function', 'k:{0.toString}', [{}], undefined, /a function/],
      ['NaN', 'k:{0}', [NaN], undefined, /NaN/],
      ['a missing request part', 'k:{query.page}', [], { query: {} }, /\{query\.page\}, which is missing/],
      ['a missing header', 'k:{headers.x-tenant}', [], { headers: {} }, /which is missing/],
    ];
    it.each(cases)('%s throws InvalidLockArgumentError', (_name, template, args, request, message) => {
      expect(() => resolve(template, args, request)).toThrow(InvalidLockArgumentError);
      expect(() => resolve(template, args, request)).toThrow(message);
    });
  });

  describe('rejects a template that can never work when it is compiled', () => {
    const cases: [string, unknown][] = [
      ['an empty key', ''],
      ['a number', 42],
      ['an object', { key: 'k' }],
      ['undefined', undefined],
      ['an unclosed brace', 'k:{0'],
      ['a stray closing brace', 'k:0}'],
      ['an empty placeholder', 'k:{}'],
      ['an empty path segment', 'k:{0..id}'],
      ['an unknown name', 'k:{user.id}'],
      ['a whole request part', 'k:{params}'],
      ['a nested brace', 'k:{0{1}}'],
    ];
    it.each(cases)('%s', (_name, template) => {
      expect(() => compileLockKey(template, where)).toThrow(InvalidLockArgumentError);
    });

    it('names the decorated method in the message', () => {
      expect(() => compileLockKey('k:{user.id}', where)).toThrow(/Service\.method/);
    });
  });

  describe('function keys', () => {
    it('receive the arguments and `this`', () => {
      const self = { tenant: 't9' };
      const key = function (this: typeof self, id: string, n: number) {
        return `${this.tenant}:${id}:${n}`;
      };
      expect(resolve(key, ['a', 2], undefined, self)).toBe('t9:a:2');
    });

    it.each([
      ['undefined', () => undefined],
      ['an empty string', () => ''],
      ['a number', () => 5],
      ['an object', () => ({})],
    ])('returning %s throws InvalidLockArgumentError', (_name, key) => {
      expect(() => resolve(key, [])).toThrow(InvalidLockArgumentError);
    });
  });
});

describe('which parameter carries the request part a template names', () => {
  const part = (template: string) => {
    const parsed = parseLockKey(template, where);
    if (Array.isArray(parsed) || !('pieces' in parsed)) throw new Error('a template');
    return parsed.pieces.find((piece) => typeof piece !== 'string')! as Parameters<typeof locateRequestPart>[0];
  };
  const locate = (
    template: string,
    kind: Parameters<typeof locateRequestPart>[1],
    params: { index: number; type: number; data?: unknown }[] | undefined,
  ) =>
    locateRequestPart(
      part(template),
      kind,
      params?.map((param) => ({ data: undefined, ...param })),
      where,
      template,
    );

  it('HTTP: the named parameter first, then the whole part, then the request (@Param, @Query, @Body, @Headers, @Req)', () => {
    expect(
      locate('{params.id.x}', 'http', [
        { index: 2, type: 5, data: 'id' },
        { index: 1, type: 5 },
        { index: 0, type: 0 },
      ]),
    ).toEqual({ index: 2, path: ['x'] });
    expect(
      locate('{query.page}', 'http', [
        { index: 1, type: 4 },
        { index: 0, type: 0 },
      ]),
    ).toEqual({ index: 1, path: ['page'] });
    expect(locate('{body.order.sku}', 'http', [{ index: 0, type: 0 }])).toEqual({
      index: 0,
      path: ['body', 'order', 'sku'],
    });
    // Nest lower-cases header names, and so does @Headers('X-Tenant').
    expect(locate('{headers.X-Tenant}', 'http', [{ index: 3, type: 6, data: 'X-Tenant' }])).toEqual({
      index: 3,
      path: [],
    });
  });

  it('a parameter of another kind does not carry the part (@Query() is not {body.x})', () => {
    expect(() => locate('{body.sku}', 'http', [{ index: 0, type: 4 }])).toThrow(
      "add @Body('sku') sku (or @Body() body, or @Req() request)",
    );
  });

  it('messages: the payload parameter, or the message itself where the handler declares none (microservices: argument 0, gateways: 1)', () => {
    expect(
      locate('{data.sku}', 'rpc', [
        { index: 1, type: 3 },
        { index: 0, type: 6 },
      ]),
    ).toEqual({ index: 1, path: ['sku'] });
    expect(locate('{data.sku}', 'rpc', undefined)).toEqual({ index: 0, path: ['sku'] });
    expect(locate('{data.sku}', 'ws', [])).toEqual({ index: 1, path: ['sku'] });
    expect(() => locate('{data.sku}', 'ws', [{ index: 0, type: 0 }])).toThrow(
      'add @Payload() data (microservices) or @MessageBody() data (gateways)',
    );
  });

  it('GraphQL: @Args(name), @Args(), or the arguments themselves', () => {
    expect(locate('{args.id}', 'graphql', [{ index: 0, type: 3, data: 'id' }])).toEqual({ index: 0, path: [] });
    expect(locate('{args.id}', 'graphql', undefined)).toEqual({ index: 1, path: ['id'] });
  });

  it('a part of another context, or any part on a method Nest does not call, is an error that says so', () => {
    expect(() => locate('{params.id}', 'rpc', [])).toThrow('which a microservice handler does not have');
    expect(() => locate('{data.id}', 'http', [{ index: 0, type: 0 }])).toThrow(
      'which an HTTP route handler does not have',
    );
    expect(() => locate('{params.id}', undefined, [])).toThrow('is not a handler Nest calls');
  });
});
