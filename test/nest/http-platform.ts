import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Platform = 'express' | 'fastify';
export const PLATFORMS: Platform[] = ['express', 'fastify'];

/** A Nest app on Express or Fastify, listening on a free 127.0.0.1 port (streams need a real socket). */
export async function startHttpApp(
  platform: Platform,
  metadata: ModuleMetadata,
  configure: (app: INestApplication) => void = () => undefined,
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app =
    platform === 'express'
      ? moduleRef.createNestApplication({ logger: process.env.NEST_LOG ? undefined : false })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  configure(app);
  await app.listen(0, '127.0.0.1');
  return app;
}

export function baseUrl(app: INestApplication): string {
  const { port } = app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** A request whose response is read as it arrives: for streamed bodies and SSE. */
export interface OpenResponse {
  readonly status: number;
  readonly response: IncomingMessage;
  /** Resolves the body received so far once it contains `text`. */
  waitFor(text: string): Promise<string>;
  /** Resolves the whole body when the response ends. */
  readonly ended: Promise<string>;
  /** Drops the connection, as a client that goes away. */
  abort(): void;
}

/** `options.agent: false`: a connection of its own, closed after the response (none left for `app.close()` to wait on). */
export function openRequest(app: INestApplication, path: string, options: RequestOptions = {}): Promise<OpenResponse> {
  return new Promise((resolve, reject) => {
    const request: ClientRequest = httpRequest(`${baseUrl(app)}${path}`, options, (response) => {
      let body = '';
      const waiters: { text: string; resolve: (body: string) => void }[] = [];
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        for (const waiter of waiters.splice(0)) {
          if (body.includes(waiter.text)) waiter.resolve(body);
          else waiters.push(waiter);
        }
      });
      const ended = new Promise<string>((end) => {
        response.on('end', () => end(body));
        response.on('close', () => end(body));
      });
      ended.catch(() => undefined);
      resolve({
        status: response.statusCode ?? 0,
        response,
        waitFor: (text) =>
          body.includes(text) ? Promise.resolve(body) : new Promise((found) => waiters.push({ text, resolve: found })),
        ended,
        abort: () => request.destroy(),
      });
    });
    request.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    request.end();
  });
}
