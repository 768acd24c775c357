import { describe, expect, it } from '@jest/globals';
import { InvalidLockArgumentError } from '../../lib/index.js';
import { compileLockKey } from '../../lib/nest/key-template.js';

const where = 'Service.method';
const resolve = (template: unknown, args: unknown[] = [], request?: object, self?: unknown) =>
  compileLockKey(template, where)(self, args, request);

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
    const request = { params: { sku: 'A1' }, query: { warehouse: 'north' }, body: { order: { id: 3 } }, headers: { 'x-tenant': 't1' } };
    expect(resolve('inv:{params.sku}:{query.warehouse}:{body.order.id}:{headers.X-Tenant}', [], request)).toBe('inv:A1:north:3:t1');
  });

  it('parts of a handler call outside one are an error that says so', () => {
    expect(() => resolve('inv:{params.sku}', ['A1'])).toThrow(/not the handler Nest is calling/);
  });

  it('a part the call does not have is an error naming the parts it has', () => {
    expect(() => compileLockKey('order:{data.id}', 'T.m')(undefined, [], { params: {}, query: {}, body: {}, headers: {} })).toThrow(
      /\{data\.id\}, but this handler call has \{params\.x\}, \{query\.x\}, \{body\.x\}, \{headers\.x\}/,
    );
    expect(compileLockKey('order:{data.id}:{args.x}', 'T.m')(undefined, [], { data: { id: 7 }, args: { x: 'y' } })).toBe('order:7:y');
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
