// The start of every test worker process: its config (JSON in argv[2]), the built package it tests,
// a lock engine on the store the config names, and the ready/go/done exchange with the parent.
// The package is the private copy the parent made (`dist`, from test/faults/dist-snapshot.ts) or,
// without one, dist/esm itself. Only the engine, the backends and what a worker names are loaded
// (not the Nest layer): a worker starts in a fraction of the time.
import { createInterface } from 'node:readline';

/** The worker's config: the JSON the parent passed as argv[2]. */
export const config = JSON.parse(process.argv[2]);

/** The built package's ESM directory URL (ending in `/`). */
export const root = config.dist ?? new URL('../../dist/esm/', import.meta.url).href;

/** Imports one module of the built package, by its path under dist/esm (e.g. 'fencing/redis-fence-guard.js'). */
export const load = (path) => import(new URL(path, root).href);

/** A LockEngine on `backend` (a createLockBackend config) with the engine `options`. */
export async function createEngine(backend, options) {
  const [{ LockEngine }, { createLockBackend }] = await Promise.all([
    load('engine/lock-engine.js'),
    load('backends/create-backend.js'),
  ]);
  return new LockEngine(await createLockBackend(backend), options);
}

/** A worker spawned with stdio pipes: prints {"event":"ready"}, then resolves on the parent's "go" line. */
export async function readyOnStdin() {
  process.stdout.write(JSON.stringify({ event: 'ready' }) + '\n');
  const stdin = createInterface({ input: process.stdin });
  await new Promise((resolve) => stdin.once('line', resolve));
  stdin.close();
}

/** A worker spawned with stdio pipes: prints its result as {"event":"done", ...result}. */
export function doneOnStdout(result) {
  process.stdout.write(JSON.stringify({ event: 'done', ...result }) + '\n');
}

/**
 * A worker forked with an IPC channel: `rpc(op, args)` asks the parent and resolves its reply
 * ({ reply: id, ... }); `started` resolves on the parent's 'go'; `stopping` aborts on its 'stop'.
 */
export function ipcChannel() {
  let nextId = 0;
  const pending = new Map();
  const stopping = new AbortController();
  let go;
  const started = new Promise((resolve) => (go = resolve));
  process.on('message', (message) => {
    if (message.reply !== undefined) {
      pending.get(message.reply)?.(message);
      pending.delete(message.reply);
    } else if (message.cmd === 'go') go();
    else if (message.cmd === 'stop') stopping.abort();
  });
  const rpc = (op, args = {}) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      process.send({ id, op, ...args });
    });
  return {
    rpc,
    started,
    stopping,
    ready: () => process.send({ event: 'ready' }),
    done: (result) => process.send({ event: 'done', ...result }, () => process.disconnect()),
  };
}
