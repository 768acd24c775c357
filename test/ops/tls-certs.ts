import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBinary } from '../harness/server-process.js';

/** PEM files of a throwaway CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA. */
export interface TestCertificates {
  readonly dir: string;
  readonly caFile: string;
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly ca: Buffer;
  readonly clientCert: Buffer;
  readonly clientKey: Buffer;
}

/** Makes the certificates with the openssl command line into `dir` (about 0.2 s). */
export function makeTestCertificates(dir: string): TestCertificates {
  const openssl = (...args: string[]) =>
    execFileSync(requireBinary('/usr/bin/openssl', 'openssl'), args, { cwd: dir, stdio: 'pipe' });
  const key = (name: string) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  key('ca');
  openssl('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=ndl-test-ca', '-days', '1', '-out', 'ca.crt');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const name of ['server', 'client']) {
    key(name);
    openssl('req', '-new', '-key', `${name}.key`, '-subj', `/CN=ndl-test-${name}`, '-out', `${name}.csr`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    );
  }
  const read = (file: string) => readFileSync(join(dir, file));
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    serverCertFile: join(dir, 'server.crt'),
    serverKeyFile: join(dir, 'server.key'),
    ca: read('ca.crt'),
    clientCert: read('client.crt'),
    clientKey: read('client.key'),
  };
}
