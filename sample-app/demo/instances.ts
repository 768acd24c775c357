import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../app.module.js';
import type { SampleConfig } from '../config.js';

export interface RunningApp {
  readonly url: string;
  stop(): Promise<void>;
}

/** One instance inside this process (the in-memory backend cannot be shared between processes). */
export async function startInProcess(config: SampleConfig): Promise<RunningApp> {
  const app = await NestFactory.create(AppModule.register(config), { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  return { url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), stop: () => app.close() };
}

/** An instance as its own OS process (sample-app/main.js), sharing Redis with the others. */
export async function startProcess(env: Record<string, string>): Promise<RunningApp> {
  const port = await freePort();
  const main = fileURLToPath(new URL('../main.js', import.meta.url));
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(child, /listening on/);
  return { url: `http://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (pattern.test(output)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`sample app exited with ${code}:\n${output}`)));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
