import type { BackendOptions } from '../backends/backend-options.js';
import { CAUSE_TEXT, diagnose, type Diagnosis } from './failure-cause.js';
import { printable } from './cli-format.js';
import { formatAddress, storeAddresses, type StoreAddress } from './option-addresses.js';
import { probe } from './store-probe.js';

/**
 * The line the CLI prints when the store failed: which store, at which address, and why
 * (`redis store at 127.0.0.1:6379: connection refused (connect ECONNREFUSED 127.0.0.1:6379)`).
 * When the driver's error names no cause, each server is probed once to find it.
 */
export async function describeStoreFailure(backend: BackendOptions, error: unknown): Promise<string> {
  const addresses = storeAddresses(backend);
  const store = `${backend.type} store at ${addresses.map(formatAddress).join(', ') || '(no address)'}`;
  const found = diagnose(error);
  // A timeout may hide a sharper cause: ZooKeeper's client says "could not connect within 5000 ms" when refused.
  if (found && found.cause !== 'timeout') return `${store}: ${explain(found)}`;
  const probed = await Promise.all(
    addresses.map(async (address) => ({ address, found: await probe(address).catch(() => undefined) })),
  );
  const failing = probed.filter(
    (entry): entry is { address: StoreAddress; found: Diagnosis } => entry.found !== undefined,
  );
  if (found && failing.every((entry) => entry.found.cause === 'timeout')) return `${store}: ${explain(found)}`;
  if (failing.length === 0) return `${store}: ${oneLine(error instanceof Error ? error.message : String(error))}`;
  return `${backend.type} store ${failing.map((entry) => `at ${formatAddress(entry.address)}: ${explain(entry.found)}`).join('; ')}`;
}

function explain({ cause, detail }: Diagnosis): string {
  return `${CAUSE_TEXT[cause]} (${oneLine(detail)})`;
}

/** Driver messages may span lines (gRPC), be long, or carry a server's control characters: the first line, printable, at most 200 characters. */
function oneLine(text: string): string {
  return printable(text.split('\n')[0].trim(), 200);
}
