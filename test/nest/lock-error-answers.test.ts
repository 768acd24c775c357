import { describe, expect, it } from '@jest/globals';
import { RpcException } from '@nestjs/microservices';
import { WsException } from '@nestjs/websockets';
import {
  InvalidLockArgumentError,
  LockBackendError,
  LockBusyException,
  LockGraphQLError,
  LockLostError,
  LockLostException,
  LockShuttingDownError,
  LockShuttingDownException,
  LockStoreUnavailableException,
  LockTimeoutError,
  StaleFenceError,
  StaleFenceException,
} from '../../lib/index.js';
import { answerLockError } from '../../lib/nest/errors/lock-error-answers.js';
import type { HandlerKind } from '../../lib/nest/nest-metadata.js';

const errors = {
  busy: new LockTimeoutError('order:1', 0, 2_500, 1_200),
  unavailable: new LockBackendError('redis', 'connect ECONNREFUSED 10.0.0.1:6379'),
  staleFence: new StaleFenceError('orders', 3, 5),
  lost: new LockLostError('order:2', 'renewal failed: connect ECONNREFUSED 10.0.0.1:6379'),
  shuttingDown: new LockShuttingDownError('redis'),
};

/** Awaits the first answer of a context whose package loads on first use. */
const answer = async (error: unknown, kind: HandlerKind) =>
  (await answerLockError(error, kind)) as Error & Record<string, unknown>;

describe('what each lock error answers, in each context', () => {
  it.each([
    [
      'busy',
      LockBusyException,
      409,
      {
        statusCode: 409,
        error: 'Conflict',
        message: 'Lock "order:1" is busy: not acquired within 0 ms',
        key: 'order:1',
        retryAfter: 2,
      },
      { 'Retry-After': '2' },
    ],
    [
      'unavailable',
      LockStoreUnavailableException,
      503,
      { statusCode: 503, error: 'Service Unavailable', message: 'The lock store is unavailable', retryAfter: 1 },
      { 'Retry-After': '1' },
    ],
    [
      'staleFence',
      StaleFenceException,
      409,
      {
        statusCode: 409,
        error: 'Conflict',
        message: errors.staleFence.message,
        resource: 'orders',
        fence: 3,
        highest: 5,
      },
      {},
    ],
    [
      'lost',
      LockLostException,
      409,
      {
        statusCode: 409,
        error: 'Conflict',
        message: 'Lock "order:2" was lost while the request held it; the work it guarded was refused',
        code: 'LOCK_LOST',
        key: 'order:2',
      },
      {},
    ],
    [
      'shuttingDown',
      LockShuttingDownException,
      503,
      {
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'This instance is shutting down',
        code: 'LOCK_SHUTTING_DOWN',
        retryAfter: 1,
      },
      { 'Retry-After': '1', Connection: 'close' },
    ],
  ] as const)(
    'HTTP, %s: its exception class, status, body and headers; the lock error is its cause',
    async (name, type, status, body, headers) => {
      const exception = (await answer(errors[name], 'http')) as unknown as InstanceType<typeof type>;
      expect(exception).toBeInstanceOf(type);
      expect(exception.getStatus()).toBe(status);
      expect(exception.getResponse()).toEqual(body);
      expect(exception.headers).toEqual(headers);
      expect(exception.cause).toBe(errors[name]);
      expect(JSON.stringify(exception.getResponse())).not.toContain('ECONNREFUSED');
    },
  );

  it.each([
    ['busy', { code: 'LOCK_BUSY', key: 'order:1', retryAfterMs: 2_500 }],
    ['unavailable', { code: 'LOCK_STORE_UNAVAILABLE', message: 'The lock store is unavailable' }],
    ['staleFence', { code: 'LOCK_STALE_FENCE', resource: 'orders', fence: 3, highest: 5 }],
    ['lost', { code: 'LOCK_LOST', key: 'order:2' }],
    ['shuttingDown', { code: 'LOCK_SHUTTING_DOWN', message: 'This instance is shutting down' }],
  ] as const)(
    "microservices, gateways and GraphQL, %s: the same payload, the store's message kept out",
    async (name, payload) => {
      const rpc = await answer(errors[name], 'rpc');
      const ws = await answer(errors[name], 'ws');
      const graphql = await answer(errors[name], 'graphql');
      expect(rpc).toBeInstanceOf(RpcException);
      expect(ws).toBeInstanceOf(WsException);
      expect(graphql).toBeInstanceOf(LockGraphQLError);
      expect((rpc as unknown as RpcException).getError()).toEqual({
        status: 'error',
        ...payload,
        message: expect.any(String),
        ...('message' in payload ? { message: payload.message } : {}),
      });
      expect((ws as unknown as WsException).getError()).toEqual((rpc as unknown as RpcException).getError());
      const {
        status: _status,
        message: _message,
        ...extensions
      } = (rpc as unknown as RpcException).getError() as Record<string, unknown>;
      expect(graphql.extensions).toEqual(extensions);
      for (const exception of [rpc, ws, graphql]) {
        expect(exception.cause).toBe(errors[name]);
        expect(JSON.stringify(exception)).not.toContain('ECONNREFUSED');
      }
    },
  );

  it('anything else goes on as it is: a bug in the calling code (InvalidLockArgumentError), or an error of yours', async () => {
    const bug = new InvalidLockArgumentError('bad key');
    const other = new Error('boom');
    for (const kind of ['http', 'rpc', 'ws', 'graphql'] as const) {
      await expect(answer(bug, kind)).resolves.toBe(bug);
      await expect(answer(other, kind)).resolves.toBe(other);
    }
  });
});
