import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HistoryEvent } from './checker.mjs';
import { now, within } from './nemesis-time.js';

const WORKER = fileURLToPath(new URL('./nemesis-worker.mjs', import.meta.url));

type Message = Record<string, unknown>;
/** What a fault does to the client that reached its checkpoint; resolves the reply the client gets (e.g. how long to hold). */
export type Act = (index: number) => Message | Promise<Message>;

/**
 * The client processes of one run, each on nemesis-worker.mjs with its config: their history
 * events are recorded, their checkpoints offered to the armed fault, their clocks read. A client
 * that exits before {@link stop} is a crash, listed in {@link crashes}.
 */
export class NemesisClients {
  readonly crashes: string[] = [];
  private readonly children: ChildProcess[] = [];
  private readonly started: { ready: Promise<void>; exited: Promise<void>; stderr(): string }[];
  private armed: { point: string; only?: number; act: Act; hit(index: number): void } | undefined;
  private stopping = false;
  private readonly clockReadings = new Map<number, (message: Message) => void>();
  private readonly gates = new Map<number, { point: string; open: Promise<unknown> }>();
  private readonly writeWatchers = new Set<(event: HistoryEvent) => void>();
  private nextReading = 0;

  constructor(
    clients: readonly { config: Message; env: NodeJS.ProcessEnv }[],
    private readonly record: (event: HistoryEvent) => void,
  ) {
    this.started = clients.map(({ config, env }, index) => this.fork(config, env, index));
  }

  /** Resolves once every client is ready; rejects if one exits first. */
  async ready(): Promise<void> {
    await Promise.all(this.started.map((client) => client.ready));
  }

  /** Starts the clients' loops. */
  go(): void {
    for (const child of this.children) child.send({ cmd: 'go' });
  }

  /** Arms `act` at `point` (for client `only`, or any) and waits until a client reached it; resolves that client, or undefined after 30 s. */
  async strike(point: string, act: Act, only?: number): Promise<number | undefined> {
    const reached = new Promise<number>((hit) => (this.armed = { point, only, act, hit }));
    const target = await within<number | undefined>(reached, 30_000, undefined);
    this.armed = undefined;
    return target;
  }

  /** Client `index`'s reply at its next checkpoint `point` (or the one it is at, when set by a strike's act) waits for `open`. */
  gate(index: number, point: string, open: Promise<unknown>): void {
    this.gates.set(index, { point, open });
  }

  /**
   * Resolves true once a client other than `target` has completed a canary write from now on (after a
   * holder fault, that client holds the lock the target lost: the target's own write now comes after
   * a newer holder's, so the fault bites), or false after `ms`.
   */
  anotherWrites(target: number, ms: number): Promise<boolean> {
    let watcher!: (event: HistoryEvent) => void;
    const wrote = new Promise<boolean>((resolve) => {
      watcher = (event) =>
        event.type === 'ok' && event.f === 'write' && event.resource === 'canary' && event.process !== target
          ? resolve(true)
          : undefined;
      this.writeWatchers.add(watcher);
    });
    return within(wrote, ms, false).finally(() => this.writeWatchers.delete(watcher));
  }

  signal(index: number, signal: NodeJS.Signals): void {
    this.children[index].kill(signal);
  }

  /** Client `index`'s monotonic clock against the runner's: of three readings, the one with the shortest round trip, timed at its midpoint. */
  async readClock(index: number): Promise<{ client: number; real: number }> {
    let best: { client: number; real: number; roundTrip: number } | undefined;
    for (let i = 0; i < 3; i++) {
      const id = this.nextReading++;
      const before = now();
      const reply = await within(
        new Promise<Message | undefined>(
          (resolve) => (this.clockReadings.set(id, resolve), this.children[index].send({ cmd: 'clock', id })),
        ),
        5_000,
        undefined,
      );
      this.clockReadings.delete(id);
      const after = now();
      if (!reply) throw new Error(`client ${index} did not answer a clock reading within 5 s`);
      if (!best || after - before < best.roundTrip)
        best = { client: Number(reply.monotonic), real: (before + after) / 2, roundTrip: after - before };
    }
    return best!;
  }

  /** Stops every client (resumed first, if paused), waits up to 20 s for them to exit, then kills what is left. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const child of this.children) {
      child.kill('SIGCONT');
      if (child.connected) child.send({ cmd: 'stop' }, () => undefined);
    }
    await within(Promise.all(this.started.map((client) => client.exited)), 20_000, undefined);
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  /** The end of each client's stderr. */
  stderr(): string {
    return this.started.map((client) => client.stderr()).join(' | ');
  }

  private fork(config: Message, env: NodeJS.ProcessEnv, index: number) {
    const child = fork(WORKER, [JSON.stringify(config)], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env });
    this.children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: Message) => {
        if (message.event === 'ready') return resolve();
        if (message.event === 'history') {
          const entry = message.entry as Partial<HistoryEvent>;
          const event = { ...entry, process: entry.process ?? index, time: entry.time ?? now() } as HistoryEvent;
          this.record(event);
          for (const watcher of this.writeWatchers) watcher(event);
          return;
        }
        if (message.event === 'clock') return void this.clockReadings.get(message.id as number)?.(message);
        if (message.op === 'checkpoint') void this.checkpoint(child, index, message);
      });
      child.once('exit', (code) => reject(new Error(`nemesis client exited before ready (${code}): ${stderr}`)));
    });
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        this.record({ process: index, type: 'event', f: 'exit', code, signal, time: now() });
        // A client that dies mid-run would end its holds early and hide what it did: the run fails.
        if (!this.stopping)
          this.crashes.push(`client ${index} exited (${code ?? signal}) before the run ended: ${stderr.slice(-3_000)}`);
        resolve();
      }),
    );
    return { ready, exited, stderr: () => stderr };
  }

  private async checkpoint(child: ChildProcess, index: number, message: Message): Promise<void> {
    const reply = (payload: Message) =>
      child.connected && child.send({ reply: message.id, ...payload }, () => undefined);
    const action = this.armed;
    let payload: Message = {};
    if (action && action.point === message.point && (action.only === undefined || action.only === index)) {
      this.armed = undefined;
      payload = await action.act(index);
      action.hit(index);
    }
    const gate = this.gates.get(index);
    if (gate && gate.point === message.point) {
      this.gates.delete(index);
      await gate.open;
    }
    reply(payload);
  }
}
