import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI, as `npx nestjs-distributed-lock` runs it (package.json `bin`). */
export const CLI = fileURLToPath(new URL('../../dist/esm/cli/main.js', import.meta.url));

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to its end, `input` on its stdin. */
export function cli(args: readonly string[], input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A CLI left running (`list --watch`), its stdout a pipe (not a terminal). */
export class RunningCli {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private err = '';
  /** How it ended, once it has. */
  readonly ended: Promise<Run>;

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => (this.out += chunk.toString()));
    this.child.stderr.on('data', (chunk: Buffer) => (this.err += chunk.toString()));
    this.ended = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code) => resolve({ code, stdout: this.out, stderr: this.err }));
    });
  }

  get stdout(): string {
    return this.out;
  }

  /** Resolves once stdout so far satisfies `check`; rejects if the CLI ends first. */
  until(what: string, check: (stdout: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      const look = () => {
        if (!check(this.out)) return;
        this.child.stdout.off('data', look);
        resolve(this.out);
      };
      this.child.stdout.on('data', look);
      void this.ended.then((run) =>
        reject(
          new Error(`the CLI ended (code ${run.code}) before ${what}; stdout: ${run.stdout}; stderr: ${run.stderr}`),
        ),
      );
      look();
    });
  }

  /** Sends `signal` and resolves how the CLI ended. */
  stop(signal: NodeJS.Signals): Promise<Run> {
    this.child.kill(signal);
    return this.ended;
  }

  /** Ends it whatever it is doing (test clean-up). */
  kill(): void {
    this.child.kill('SIGKILL');
  }
}
