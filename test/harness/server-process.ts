import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const INSTALL_HINT =
  'run `bash scripts/install-servers.sh` (Debian/Ubuntu, as root) or `npm run test:full`, which installs every test server';

/** Throws a clear message naming the package to install when a server binary is missing. */
export function requireBinary(path: string, debianPackage: string): string {
  if (!existsSync(path)) {
    throw new Error(
      `Test server binary ${path} is missing: install the Debian package "${debianPackage}" (${INSTALL_HINT}).`,
    );
  }
  return path;
}

/** A fresh temp dir under /tmp (readable by the service users that mariadbd/postgres run as). */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `ndl-${prefix}-`));
}

export async function waitUntil(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  intervalMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * A server started by a test, on 127.0.0.1, stopped by PID. `kill`, `pause` and `resume` inject
 * faults (SIGKILL, SIGSTOP, SIGCONT).
 */
export class ServerProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    private readonly options: SpawnOptions = {},
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get recentOutput(): string {
    return this.output.slice(-4000);
  }

  start(): void {
    this.output = '';
    // env: this module's process.env, which under jest is the test's own copy (a test may set variables for the servers it starts).
    const child = spawn(this.command, this.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
      ...this.options,
    });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', (error) => keep(Buffer.from(String(error))));
    this.child = child;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Graceful stop (SIGTERM), then SIGKILL if it lingers. */
  async stop(timeoutMs = 5000): Promise<void> {
    await this.signalAndWait('SIGCONT', 0);
    await this.signalAndWait('SIGTERM', timeoutMs);
    if (this.running) await this.signalAndWait('SIGKILL', timeoutMs);
  }

  async kill(): Promise<void> {
    await this.signalAndWait('SIGKILL', 5000);
  }

  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  private signalAndWait(signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return Promise.resolve();
    return new Promise((resolve) => {
      if (timeoutMs === 0) {
        child.kill(signal);
        return resolve();
      }
      const timer = setTimeout(resolve, timeoutMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill(signal);
    });
  }
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
