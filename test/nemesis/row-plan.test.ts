import { describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findLibfaketime, planRow, type Machine } from './row-plan.js';

const bare: Machine = { iptables: () => false, isolation: () => false, libfaketime: () => undefined };
const full: Machine = {
  iptables: () => true,
  isolation: () => true,
  libfaketime: () => '/usr/lib/x/faketime/libfaketimeMT.so.1',
};

describe('which nemesis rows run, are skipped, or fail', () => {
  it('skips a row whose fault this machine cannot inject, saying why', () => {
    expect(planRow('partition tcp', { machine: bare, ci: false })).toEqual({
      run: false,
      skip: true,
      reason: 'dropping packets needs iptables as root',
    });
    expect(planRow('slow clock', { machine: bare, ci: false })).toMatchObject({
      run: false,
      skip: true,
      reason: expect.stringContaining('libfaketime'),
    });
    expect(planRow('isolate leader', { machine: bare, ci: false })).toMatchObject({ run: false, skip: true });
  });

  it('fails, under CI=true, a row whose fault needs what CI installs and runs as (iptables as root, libfaketime)', () => {
    for (const fault of [
      'partition tcp',
      'isolate leader',
      'isolate member',
      'isolate leader from peers',
      'slow clock',
      'store clock fast',
    ] as const) {
      expect(planRow(fault, { machine: bare, ci: true })).toMatchObject({ run: false, skip: false });
    }
  });

  it("still skips, under CI=true, an isolation that lacks only cgroup v2 (the kernel's, which no install provides)", () => {
    expect(planRow('isolate member', { machine: { ...full, isolation: () => false }, ci: true })).toEqual({
      run: false,
      skip: true,
      reason: 'isolating a member needs cgroup v2',
    });
  });

  it('runs a row this machine can inject, and one that needs nothing but the proxies anywhere', () => {
    for (const fault of ['partition tcp', 'isolate leader', 'slow clock', 'store clock fast'] as const)
      expect(planRow(fault, { machine: full, ci: true })).toEqual({ run: true });
    expect(planRow('partition', { machine: bare, ci: true })).toEqual({ run: true });
  });

  it('skips a row kept for the long run outside it, under CI=true too, and runs it in the long run', () => {
    expect(planRow('failover', { machine: full, ci: true, longOnly: true, long: false })).toEqual({
      run: false,
      skip: true,
      reason: 'runs in npm run test:nemesis (NEMESIS_LONG=1)',
    });
    expect(planRow('failover', { machine: full, ci: true, longOnly: true, long: true })).toEqual({ run: true });
  });

  it("finds libfaketime in any architecture's library directory, as scripts/install-servers.sh does", () => {
    const lib = mkdtempSync(join(tmpdir(), 'ndl-lib-'));
    try {
      expect(findLibfaketime(lib)).toBeUndefined();
      mkdirSync(join(lib, 'aarch64-linux-gnu', 'faketime'), { recursive: true });
      writeFileSync(join(lib, 'aarch64-linux-gnu', 'faketime', 'libfaketimeMT.so.1'), '');
      expect(findLibfaketime(lib)).toBe(join(lib, 'aarch64-linux-gnu', 'faketime', 'libfaketimeMT.so.1'));
    } finally {
      rmSync(lib, { recursive: true, force: true });
    }
  });
});
