// A throwaway standalone ZooKeeper 3.8 on a free 127.0.0.1 port, started with java directly (no
// zkServer.sh), `forceSync=no`, JIT limited to C1: the same server as test/harness/zookeeper-server.ts.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.mjs';

/** A four-letter command's answer ('' when the server does not answer). */
function fourLetterWord(port, word) {
  return new Promise((resolve) => {
    let answer = '';
    const socket = createConnection(port, '127.0.0.1', () => socket.end(word));
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(''));
  });
}

/** Starts one; resolves { connectionString, stop() } once it serves clients. */
export async function startZookeeper() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ndl-bench-zk-'));
  mkdirSync(join(dir, 'data'));
  const config = [
    'tickTime=500',
    'initLimit=10',
    'syncLimit=5',
    `dataDir=${join(dir, 'data')}`,
    `clientPort=${port}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    '4lw.commands.whitelist=*',
    'forceSync=no',
  ];
  writeFileSync(join(dir, 'zoo.cfg'), config.join('\n') + '\n');
  const classpath = '/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar';
  const child = spawn(
    '/usr/bin/java',
    [
      '-Xmx192m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-cp',
      classpath,
      'org.apache.zookeeper.server.quorum.QuorumPeerMain',
      join(dir, 'zoo.cfg'),
    ],
    { stdio: 'ignore' },
  );
  const stop = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; !/^Mode: /m.test(await fourLetterWord(port, 'srvr')); i++) {
    if (i > 600) {
      stop();
      throw new Error(
        'ZooKeeper did not start (is java installed, with /usr/share/java/zookeeper.jar? apt-get install zookeeper)',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { connectionString: `127.0.0.1:${port}`, stop };
}
