import mysql from 'mysql2/promise';
import pg from 'pg';
import type { NemesisStore } from './nemesis-runner.js';
import type { StartedStore } from './nemesis-stores.js';
import { findLibfaketime } from './row-plan.js';

/** Under `store clock fast` the store's servers run this much faster than real time (libfaketime): their leases end early. */
export const STORE_CLOCK_RATE = 1.01;

/**
 * Starts a store with its servers under libfaketime at {@link STORE_CLOCK_RATE} x real time: the
 * servers inherit LD_PRELOAD and FAKETIME from this process's environment while `start` runs (the
 * nemesis clients, forked later, do not). Only servers that read the clock through the C library
 * can be faked so; see docs/faults.md for which do.
 */
export async function withFastClock(name: string, start: () => Promise<StartedStore>): Promise<StartedStore> {
  const saved = { LD_PRELOAD: process.env.LD_PRELOAD, FAKETIME: process.env.FAKETIME };
  const libfaketime = findLibfaketime();
  if (!libfaketime) throw new Error('libfaketime is not installed (Debian package faketime)');
  process.env.LD_PRELOAD = libfaketime;
  process.env.FAKETIME = `+0 x${STORE_CLOCK_RATE}`;
  let store: StartedStore;
  try {
    store = await start();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
  return { ...store, name, storeClockRate: STORE_CLOCK_RATE };
}

/** How fast the store's server clock runs against this process's, measured over `overMs` (each reading timed at its round trip's midpoint). */
export async function measureClockRate(
  store: Pick<NemesisStore, 'name' | 'serverClockMs'>,
  overMs = 2_000,
): Promise<number> {
  if (!store.serverClockMs) throw new Error(`${store.name}: no server clock to read`);
  // Of a few readings, the one with the shortest round trip: a reading that waited on a loaded machine would skew the rate
  // by its wait over `overMs` (10 ms over 2 s: half the 1 % asked).
  const read = async () => {
    let best: { server: number; real: number; roundTrip: number } | undefined;
    for (let i = 0; i < 5; i++) {
      const before = performance.now();
      const server = await store.serverClockMs!();
      const after = performance.now();
      if (!best || after - before < best.roundTrip)
        best = { server, real: (before + after) / 2, roundTrip: after - before };
    }
    return best!;
  };
  const first = await read();
  await new Promise((resolve) => setTimeout(resolve, overMs));
  const second = await read();
  return (second.server - first.server) / (second.real - first.real);
}

/**
 * A SQL server's clock in ms, read over one connection kept open (a new client per reading spends
 * tens of ms starting and connecting before the server reads its clock: a skew of 0.5 % over 2 s).
 */
export function sqlServerClock(
  dialect: 'postgres' | 'mysql',
  url: string,
): { read(): Promise<number>; close(): Promise<void> } {
  let connection: Promise<{ now(): Promise<number>; end(): Promise<void> }> | undefined;
  const open = async () => {
    if (dialect === 'postgres') {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      await client.connect();
      return {
        now: async () =>
          Number((await client.query('SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms')).rows[0].ms),
        end: () => client.end(),
      };
    }
    const client = await mysql.createConnection(url);
    client.on('error', () => undefined);
    return {
      now: async () =>
        Number(
          ((await client.query('SELECT UNIX_TIMESTAMP(NOW(6)) * 1000 AS ms')) as [{ ms: string }[], unknown])[0][0].ms,
        ),
      end: () => client.end(),
    };
  };
  return {
    read: async () => (await (connection ??= open())).now(),
    close: async () => void (await (await connection)?.end()),
  };
}
