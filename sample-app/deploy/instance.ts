import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** One sample-app process on a fixed port, which a rolling deploy stops (SIGTERM) and starts again. */
export class Instance {
  private child: ChildProcess | undefined;
  private output = '';
  /** How each SIGTERM ended: the exit code and how long the process took to exit. */
  readonly stops: { code: number | null; signal: NodeJS.Signals | null; tookMs: number }[] = [];

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the process; resolves once it listens. */
  start(): Promise<void> {
    const main = fileURLToPath(new URL('../main.js', import.meta.url));
    const child = spawn(process.execPath, [main], {
      env: { ...process.env, ...this.env, PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.output = '';
    child.stderr.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    return new Promise((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        this.output += chunk.toString();
        if (/listening on/.test(this.output)) resolve();
      };
      child.stdout.on('data', onData);
      child.once('exit', (code) =>
        reject(new Error(`sample app on port ${this.port} exited with ${code}:\n${this.output}`)),
      );
    });
  }

  /** Sends SIGTERM and resolves once the process has exited (after its graceful shutdown). */
  stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    const startedAt = performance.now();
    return new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.stops.push({ code, signal, tookMs: Math.round(performance.now() - startedAt) });
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  /** What the process wrote to stderr (errors and warnings) since it last started. */
  get log(): string {
    return this.output;
  }
}
