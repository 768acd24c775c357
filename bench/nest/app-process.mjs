import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../lib/redis-server.mjs';

const app = join(dirname(fileURLToPath(import.meta.url)), 'app.mjs');

/** How long an app may take to listen before it counts as failed. */
const READY_MS = 60_000;

/**
 * Starts one bench app (bench/nest/app.mjs) and resolves `{ child, port }` once it listens. `env` is
 * the app's settings (CONTENDER, REDIS_URL, LIB, WORKLOAD...). Without a `port` the app gets a free
 * one, and one fresh free port more if the first was taken before the app could listen on it (an
 * outgoing connection of the load generator may take any ephemeral port). An app that exits before
 * listening, or does not listen within a minute, is stopped and the start rejects, naming it.
 */
export async function startApp(env, { port, execArgv = [] } = {}) {
  const fixedPort = port !== undefined;
  for (let attempt = 1; ; attempt++) {
    const tryPort = fixedPort ? port : await freePort();
    try {
      return { child: await forkReady({ ...env, PORT: String(tryPort) }, execArgv), port: tryPort };
    } catch (error) {
      if (fixedPort || attempt === 2) throw error;
    }
  }
}

function forkReady(env, execArgv) {
  const child = fork(app, [], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
  });
  const name = `${env.CONTENDER} app on port ${env.PORT}`;
  return new Promise((resolve, reject) => {
    const settle = (error) => {
      clearTimeout(deadline);
      child.off('message', ready);
      child.off('exit', exited);
      if (error) stopApp(child).then(() => reject(error));
      else resolve(child);
    };
    const ready = () => settle();
    const exited = (code, signal) => settle(new Error(`${name} exited (${code ?? signal}) before listening`));
    const deadline = setTimeout(() => settle(new Error(`${name} did not listen within ${READY_MS} ms`)), READY_MS);
    child.once('message', ready);
    child.once('exit', exited);
  });
}

/** Stops a bench app: SIGTERM (it closes and exits), SIGKILL after 3 s. */
export function stopApp(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts `count` apps (`envFor(i)`, `optionsFor(i)`); if one fails to start, stops those already started and rejects. */
export async function startApps(count, envFor, optionsFor = () => ({})) {
  const apps = [];
  try {
    for (let i = 0; i < count; i++) apps.push(await startApp(envFor(i), optionsFor(i)));
    return apps;
  } catch (error) {
    await stopApps(apps);
    throw error;
  }
}

export function stopApps(apps) {
  return Promise.all(apps.map(({ child }) => stopApp(child)));
}
