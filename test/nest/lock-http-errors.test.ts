import { describe, expect, it } from '@jest/globals';
import { HttpException } from '@nestjs/common';
import { LockBackendError, LockTimeoutError } from '../../lib/index.js';
import { toHttpError } from '../../lib/nest/lock-http-errors.js';

/** Records headers the way each platform's response object takes them. */
const expressResponse = () => {
  const headers: Record<string, string> = {};
  return { headers, setHeader: (name: string, value: string) => void (headers[name] = value) };
};
const fastifyReply = () => {
  const headers: Record<string, string> = {};
  return { headers, header: (name: string, value: string) => void (headers[name] = value) };
};

describe('lock errors of @Locked route handlers as HTTP errors', () => {
  it.each([
    ['Express', expressResponse],
    ['Fastify', fastifyReply],
  ])('busy → 409 with Retry-After on the %s response', (_platform, makeResponse) => {
    const response = makeResponse();
    const mapped = toHttpError(new LockTimeoutError('order:1', 0, 2_100), response) as HttpException;
    expect(mapped).toBeInstanceOf(HttpException);
    expect(mapped.getStatus()).toBe(409);
    expect(mapped.getResponse()).toMatchObject({ key: 'order:1', retryAfter: 3 });
    expect(response.headers).toEqual({ 'Retry-After': '3' });
  });

  it('busy with the holder\'s lease unknown → 409 without Retry-After', () => {
    const response = expressResponse();
    const mapped = toHttpError(new LockTimeoutError('order:1', 0), response) as HttpException;
    expect(mapped.getStatus()).toBe(409);
    expect(mapped.getResponse()).not.toHaveProperty('retryAfter');
    expect(response.headers).toEqual({});
  });

  it('store down → 503 without the store\'s message; other errors unchanged', () => {
    const mapped = toHttpError(new LockBackendError('redis', 'connect ECONNREFUSED 10.0.0.1:6379'), expressResponse()) as HttpException;
    expect(mapped.getStatus()).toBe(503);
    expect(JSON.stringify(mapped.getResponse())).not.toContain('ECONNREFUSED');
    const other = new Error('boom');
    expect(toHttpError(other, expressResponse())).toBe(other);
  });
});
