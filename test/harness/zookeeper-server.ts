import { mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { removeDir, requireBinary, ServerProcess, tempDir, waitUntil } from './server-process.js';

const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
const SLF4J_SIMPLE_JAR = '/usr/share/java/slf4j-simple.jar';
/** tickTime=500 lets sessions be as short as 1 s (ZooKeeper clamps them to 2..20 ticks). */
export const ZOOKEEPER_TICK_MS = 500;

interface QuorumPort {
  readonly id: number;
  readonly quorumPort: number;
  readonly electionPort: number;
}

/**
 * One ZooKeeper 3.8 server started with java directly (no zkServer.sh), on 127.0.0.1, data in a
 * temp dir. Standalone unless `quorum` lists the ensemble's members.
 */
export class ZookeeperServer extends ServerProcess {
  private constructor(
    readonly id: number,
    readonly port: number,
    private readonly dataDir: string,
    /** An ensemble member's quorum and election ports (empty when standalone). */
    readonly peerPorts: readonly number[] = [],
  ) {
    const java = requireBinary('/usr/bin/java', 'zookeeper');
    const classpath = [requireBinary(ZOOKEEPER_JAR, 'zookeeper'), SLF4J_SIMPLE_JAR].join(':');
    super(`zookeeper-${id}`, java, [
      '-Xmx192m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp',
      classpath,
      'org.apache.zookeeper.server.quorum.QuorumPeerMain',
      join(dataDir, 'zoo.cfg'),
    ]);
  }

  get connectionString(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts a standalone server on a free port. */
  static async start(): Promise<ZookeeperServer> {
    const server = ZookeeperServer.configure(1, await freePort(), []);
    server.start();
    await server.waitReady();
    return server;
  }

  /** @internal Writes the config (and `myid` for an ensemble member) without starting the server. */
  static configure(id: number, port: number, quorum: readonly QuorumPort[]): ZookeeperServer {
    const dataDir = tempDir(`zk${id}`);
    mkdirSync(join(dataDir, 'data'));
    const lines = [
      `tickTime=${ZOOKEEPER_TICK_MS}`,
      'initLimit=10',
      'syncLimit=5',
      `dataDir=${join(dataDir, 'data')}`,
      `clientPort=${port}`,
      'clientPortAddress=127.0.0.1',
      'admin.enableServer=false',
      '4lw.commands.whitelist=*',
      'forceSync=no',
      ...quorum.map((member) => `server.${member.id}=127.0.0.1:${member.quorumPort}:${member.electionPort}`),
    ];
    writeFileSync(join(dataDir, 'zoo.cfg'), lines.join('\n') + '\n');
    if (quorum.length > 0) writeFileSync(join(dataDir, 'data', 'myid'), `${id}\n`);
    const own = quorum.find((member) => member.id === id);
    return new ZookeeperServer(id, port, dataDir, own ? [own.quorumPort, own.electionPort] : []);
  }

  /** Starts it again on the same port and data (sessions and lock nodes survive, as after a crash and restart). */
  async restart(): Promise<void> {
    if (this.running) await this.kill();
    this.start();
    await this.waitReady();
  }

  /** Standalone: `ruok` answers `imok`. Ensemble member: `srvr` reports a Mode (ruok says imok before quorum). */
  async waitReady(timeoutMs = 30_000): Promise<void> {
    await waitUntil(
      `${this.name} on port ${this.port} (output: ${this.recentOutput})`,
      async () => (await this.mode()) !== undefined,
      timeoutMs,
      50,
    );
  }

  /** `standalone`, `leader` or `follower`; undefined while it cannot serve clients. */
  async mode(): Promise<string | undefined> {
    const answer = await fourLetterWord(this.port, 'srvr').catch(() => '');
    return /^Mode: (\w+)/m.exec(answer)?.[1];
  }

  fourLetter(command: string): Promise<string> {
    return fourLetterWord(this.port, command);
  }

  /** Stops the server and deletes its data. */
  async destroy(): Promise<void> {
    await this.stop();
    removeDir(this.dataDir);
  }
}

/** A 3-node ensemble on 127.0.0.1 (each member with its own client port). */
export class ZookeeperEnsemble {
  private constructor(readonly members: readonly ZookeeperServer[]) {}

  get connectionString(): string {
    return this.members.map((member) => member.connectionString).join(',');
  }

  static async start(size = 3): Promise<ZookeeperEnsemble> {
    const quorum: QuorumPort[] = [];
    const clientPorts: number[] = [];
    for (let id = 1; id <= size; id++) {
      quorum.push({ id, quorumPort: await freePort(), electionPort: await freePort() });
      clientPorts.push(await freePort());
    }
    const ensemble = new ZookeeperEnsemble(
      quorum.map((member, i) => ZookeeperServer.configure(member.id, clientPorts[i], quorum)),
    );
    for (const member of ensemble.members) member.start();
    await Promise.all(ensemble.members.map((member) => member.waitReady(60_000)));
    return ensemble;
  }

  /**
   * Waits until every member serves again after a test's fault. One that has not rejoined within
   * `rejoinMs` is restarted on its data, as an operator would: here, a ZooKeeper 3.8 follower stopped
   * and continued (SIGSTOP, SIGCONT) has been seen to serve nothing (no Mode from `srvr`) for over a minute.
   */
  async allServing(rejoinMs = 15_000): Promise<void> {
    await Promise.all(
      this.members.map(async (member) => {
        try {
          await member.waitReady(rejoinMs);
        } catch (error) {
          console.warn(`${(error as Error).message}; restarting it`);
          await member.restart();
        }
      }),
    );
  }

  /** Waits until every running member serves, one of them as the leader (a healed member takes seconds to rejoin); resolves how long that took. */
  async settled(timeoutMs = 30_000): Promise<number> {
    const startedAt = performance.now();
    await waitUntil(
      'every ZooKeeper member to serve, one as the leader',
      async () => {
        const modes = await Promise.all(this.members.filter((member) => member.running).map((member) => member.mode()));
        return (
          modes.every((mode) => mode === 'leader' || mode === 'follower') &&
          modes.filter((mode) => mode === 'leader').length === 1
        );
      },
      timeoutMs,
      50,
    );
    return performance.now() - startedAt;
  }

  /** Waits until the running members other than `cut` serve clients, one of them as the leader (at once when `cut` was a follower). */
  async servingWithout(cut: ZookeeperServer, timeoutMs = 30_000): Promise<void> {
    await waitUntil(
      `the ZooKeeper members other than ${cut.name} to serve, one as the leader`,
      async () => {
        const others = this.members.filter((member) => member !== cut && member.running);
        const modes = await Promise.all(others.map((member) => member.mode()));
        return (
          modes.every((mode) => mode === 'leader' || mode === 'follower') &&
          modes.filter((mode) => mode === 'leader').length === 1
        );
      },
      timeoutMs,
      25,
    );
  }

  async leader(): Promise<ZookeeperServer> {
    for (const member of this.members) {
      if (member.running && (await member.mode()) === 'leader') return member;
    }
    throw new Error('The ensemble has no leader right now');
  }

  async destroy(): Promise<void> {
    await Promise.all(this.members.map((member) => member.destroy()));
  }
}

/** Sends a ZooKeeper four-letter command and resolves the whole answer (the server closes the connection). */
export function fourLetterWord(port: number, command: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => socket.write(command));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.once('end', () => resolve(answer));
    socket.once('error', reject);
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error(`${command} on port ${port} timed out`));
    });
  });
}
