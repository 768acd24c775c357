import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createLockBackend, LockBackendError, LockEngine, type EtcdBackendOptions } from '../../lib/index.js';
import { TlsEtcdServer } from './tls-etcd-server.js';

let etcd: TlsEtcdServer;
let engines: LockEngine[] = [];

const options = (credentials?: EtcdBackendOptions['credentials']): EtcdBackendOptions => ({
  type: 'etcd',
  urls: etcd.url,
  requestTimeoutMs: 2_000,
  ...(credentials && { credentials }),
});

async function engineFor(backendOptions: EtcdBackendOptions): Promise<LockEngine> {
  const engine = new LockEngine(await createLockBackend(backendOptions), {
    keyPrefix: 'tls:',
    leaseMs: 10_000,
    waitMs: 0,
  });
  engines.push(engine);
  return engine;
}

beforeAll(async () => {
  etcd = await TlsEtcdServer.start();
}, 30_000);
afterEach(async () => {
  await Promise.all(engines.map((engine) => engine.close()));
  engines = [];
});
afterAll(() => etcd?.destroy());

describe('etcd backend over TLS with client certificates', () => {
  it('works with the CA and a client certificate (PEM Buffers or strings)', async () => {
    const { ca, clientKey, clientCert } = etcd.certificates;
    for (const credentials of [
      { rootCertificate: ca, privateKey: clientKey, certChain: clientCert },
      { rootCertificate: ca.toString(), privateKey: clientKey.toString(), certChain: clientCert.toString() },
    ]) {
      const engine = await engineFor(options(credentials));
      const lock = await engine.acquire('k');
      expect(await engine.tryAcquire('k')).toBeNull();
      await lock.release();
      await expect(engine.backend.ping!()).resolves.toBeUndefined();
    }
  });

  it('without a client certificate etcd refuses the connection: LockBackendError, not busy', async () => {
    const engine = await engineFor(options({ rootCertificate: etcd.certificates.ca }));
    await expect(engine.acquire('k')).rejects.toBeInstanceOf(LockBackendError);
  });

  it("without the CA the server's certificate is not trusted (system roots): LockBackendError", async () => {
    const { clientKey, clientCert } = etcd.certificates;
    const engine = await engineFor(options({ privateKey: clientKey, certChain: clientCert }));
    await expect(engine.acquire('k')).rejects.toBeInstanceOf(LockBackendError);
  });
});
