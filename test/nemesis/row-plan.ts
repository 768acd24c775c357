import { existsSync, readdirSync } from 'node:fs';
import { canUseIptables } from './iptables.js';
import type { NemesisFault } from './nemesis-runner.js';
import { canIsolate } from './port-isolation.js';

/** What this machine offers the faults that need more than a proxy. */
export interface Machine {
  /** iptables, as root. */
  iptables(): boolean;
  /** iptables as root, and cgroup v2 (a member's own connections while it is isolated). */
  isolation(): boolean;
  /** libfaketime's path, if installed. */
  libfaketime(): string | undefined;
}

/** libfaketime's multi-threaded library, in any architecture's directory, as scripts/install-servers.sh looks for it. */
export function findLibfaketime(libDir = '/usr/lib'): string | undefined {
  const dirs = existsSync(libDir) ? readdirSync(libDir) : [];
  return dirs.map((dir) => `${libDir}/${dir}/faketime/libfaketimeMT.so.1`).find((path) => existsSync(path));
}

export const thisMachine: Machine = {
  iptables: canUseIptables,
  isolation: canIsolate,
  libfaketime: () => findLibfaketime(),
};

/** Whether a row runs, is skipped (with why), or fails at once (with why). */
export type RowPlan = { readonly run: true } | { readonly run: false; readonly skip: boolean; readonly reason: string };

/**
 * The plan of one row. A row kept for the long run (`longOnly`) is skipped outside it. A row whose
 * fault this machine cannot inject is skipped, with its reason, except under CI (`ci`: CI=true),
 * where scripts/install-servers.sh installs iptables and libfaketime and the suite runs as root
 * (README): there it fails. cgroup v2 is the kernel's, which no install provides: skipped anywhere.
 */
export function planRow(
  fault: NemesisFault,
  {
    machine = thisMachine,
    ci = process.env.CI === 'true',
    long = false,
    longOnly = false,
  }: { machine?: Machine; ci?: boolean; long?: boolean; longOnly?: boolean } = {},
): RowPlan {
  if (longOnly && !long) return { run: false, skip: true, reason: 'runs in npm run test:nemesis (NEMESIS_LONG=1)' };
  const missing = missingFor(fault, machine);
  if (!missing) return { run: true };
  return { run: false, skip: !(ci && missing.inCi), reason: missing.reason };
}

function missingFor(fault: NemesisFault, machine: Machine): { reason: string; inCi: boolean } | undefined {
  if (fault === 'partition tcp' && !machine.iptables())
    return { reason: 'dropping packets needs iptables as root', inCi: true };
  if (fault.startsWith('isolate')) {
    if (!machine.iptables()) return { reason: 'isolating a member needs iptables as root', inCi: true };
    if (!machine.isolation()) return { reason: 'isolating a member needs cgroup v2', inCi: false };
  }
  if ((fault === 'slow clock' || fault === 'store clock fast') && machine.libfaketime() === undefined) {
    return {
      reason: 'libfaketime is not installed (Debian package faketime: /usr/lib/<arch>/faketime/libfaketimeMT.so.1)',
      inCi: true,
    };
  }
  return undefined;
}
