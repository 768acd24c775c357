import { createServer } from 'node:net';

/**
 * Ports for the test servers come from 20000-31999, below Linux's ephemeral range (32768-60999),
 * and each jest worker draws from a block of its own. A port picked by `listen(0)` came from the
 * ephemeral range that every worker shares: while a server was down for a restart test, another
 * test file's server could be given its port, and the clients reconnected to the wrong server (an
 * etcd fault run saw two holders at once).
 */
const FIRST_PORT = 20_000;
const BLOCK = 1_500;
const BLOCKS = 8;
/** TEST_PORT_BLOCK shifts the blocks, so that two test runs on one machine (two checkouts) draw from different ones. */
const worker = (Number(process.env.JEST_WORKER_ID ?? 0) + Number(process.env.TEST_PORT_BLOCK ?? 0)) % BLOCKS;
const blockStart = FIRST_PORT + worker * BLOCK;
/** Where this file (jest gives each file its own module state) starts in its block: spread, so that files of one worker rarely reuse a port at once. */
let offset = Math.floor(Math.random() * BLOCK);

/** A loopback TCP port that was free a moment ago, from this worker's block. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < BLOCK; tries++) {
    const port = blockStart + (offset++ % BLOCK);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${blockStart}-${blockStart + BLOCK - 1}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
