/**
 * Packs the library as npm would publish it and installs the tarball, from the registry,
 * into two throwaway apps: a NestJS 12 ESM app (`import`) and a NestJS 11 CommonJS app
 * (`require`). Each app runs test/packaging/fixtures/scenario.cjs and prints a JSON result.
 *
 * The build runs in a staging copy of the sources (lib/, scripts/, package.json, tsconfigs)
 * so this suite never rewrites the repository's dist/, which other suites' child processes
 * import while jest runs them in parallel.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = join(ROOT, 'test/packaging/fixtures');
const SETUP_TIMEOUT_MS = 300_000;
const INSTALL_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'];

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment without what `npm test` added: npm_* (npm_config_local_prefix would point npm at the repo) and jest's NODE_OPTIONS. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(name) || name === 'NODE_OPTIONS' || name === 'INIT_CWD') continue;
    env[name] = value;
  }
  return env;
}

function run(command: string, args: string[], cwd: string, timeoutMs = 180_000): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

async function runOk(command: string, args: string[], cwd: string): Promise<RunResult> {
  const result = await run(command, args, cwd);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} (in ${cwd}) exited ${result.code}\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`,
    );
  }
  return result;
}

/** The Nest packages of one major an app installs: the HTTP platform, microservices and gateways too, whose metadata `@Locked()` reads. */
const nestPackages = (major: number) =>
  ['common', 'core', 'platform-express', 'microservices', 'websockets'].map((name) => `@nestjs/${name}@^${major}`);

interface AppOutcome {
  result?: any;
  failure?: string;
}

/** Creates an app dir, installs the tarball and Nest from the registry, runs its entry and parses its RESULT line. */
async function installAndRun(
  dir: string,
  pkg: Record<string, unknown>,
  deps: string[],
  files: Record<string, string>,
  entry: string,
): Promise<AppOutcome> {
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
    for (const [target, source] of Object.entries(files)) cpSync(source, join(dir, target));
    await runOk('npm', ['install', ...INSTALL_FLAGS, ...deps], dir);
    const { stdout, stderr, code } = await run('node', [entry], dir, 60_000);
    const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
    if (code !== 0 || !line)
      return { failure: `node ${entry} exited ${code}\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}` };
    return { result: JSON.parse(line.slice('RESULT '.length)) };
  } catch (error) {
    return { failure: String((error as Error).stack ?? error) };
  }
}

function resultOf(outcome: AppOutcome): any {
  if (outcome.failure) throw new Error(outcome.failure);
  return outcome.result;
}

/** Asserts one part of the scenario ran; its error (missing export, ...) becomes the failure message. */
function partOf(outcome: AppOutcome, name: string): any {
  const part = resultOf(outcome)[name];
  expect(part).toBeDefined();
  if (!part.ok)
    throw new Error(`scenario part '${name}' failed: ${part.error?.name}: ${part.error?.message}\n${part.stack}`);
  return part;
}

const work = mkdtempSync(join(tmpdir(), 'ndl-packaging-'));
let packed: { filename: string; files: { path: string }[] };
let tarball = '';
let dtsCheck: RunResult;
let typesCheck: RunResult;
let publintCheck: RunResult;
let esm: AppOutcome = {};
let cjs: AppOutcome = {};

beforeAll(async () => {
  // 1. A staging copy of the sources, sharing the repository's node_modules (tsc, types).
  const stage = join(work, 'stage');
  for (const entry of [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'tsconfig.build.cjs.json',
    'lib',
    'scripts',
    'docs',
    'README.md',
    'CHANGELOG.md',
    'LICENSE',
  ]) {
    if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(stage, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');

  // 2. Build, check the declarations, pack.
  await runOk('npm', ['run', 'build', '--silent'], stage);
  dtsCheck = await run('node', ['scripts/check-dts.mjs'], stage);
  const packDir = join(work, 'pack');
  mkdirSync(packDir);
  const pack = await runOk('npm', ['pack', '--json', '--pack-destination', packDir, '--loglevel=error'], stage);
  packed = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')))[0];
  tarball = join(packDir, packed.filename);
  // Every entry's types resolve under node10, node16 (CJS and ESM) and bundler; package.json lints clean.
  [typesCheck, publintCheck] = await Promise.all([
    run(join(ROOT, 'node_modules/.bin/attw'), [tarball, '--format', 'ascii', '--no-color'], stage),
    run(join(ROOT, 'node_modules/.bin/publint'), ['--strict'], stage),
  ]);

  // 3. Two apps, installed in parallel.
  const esmDir = join(work, 'esm-app');
  const cjsDir = join(work, 'cjs-app');
  mkdirSync(esmDir);
  mkdirSync(cjsDir);
  [esm, cjs] = await Promise.all([
    installAndRun(
      esmDir,
      { name: 'esm-app', version: '1.0.0', private: true, type: 'module' },
      [tarball, ...nestPackages(12), 'reflect-metadata', 'rxjs'],
      {
        'main.mjs': join(FIXTURES, 'esm-app/main.mjs'),
        'scenario.cjs': join(FIXTURES, 'scenario.cjs'),
        'handlers-scenario.cjs': join(FIXTURES, 'handlers-scenario.cjs'),
      },
      'main.mjs',
    ),
    installAndRun(
      cjsDir,
      { name: 'cjs-app', version: '1.0.0', private: true, type: 'commonjs' },
      // ioredis is installed here on purpose: the package must still not load it unless configured.
      [tarball, ...nestPackages(11), 'reflect-metadata', 'rxjs', 'ioredis@^5'],
      {
        'main.cjs': join(FIXTURES, 'cjs-app/main.cjs'),
        'scenario.cjs': join(FIXTURES, 'scenario.cjs'),
        'handlers-scenario.cjs': join(FIXTURES, 'handlers-scenario.cjs'),
      },
      'main.cjs',
    ),
  ]);
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  if (!process.env.KEEP_PACKAGING_TMP) rmSync(work, { recursive: true, force: true });
});

describe('packed package', () => {
  it('ships ESM and CJS builds with declarations per condition, the docs, and no sources or tests', () => {
    const paths = packed.files.map((f) => f.path);
    for (const file of [
      'package.json',
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'docs/README.md',
      'dist/esm/index.js',
      'dist/esm/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/package.json',
    ]) {
      expect(paths).toContain(file);
    }
    expect(paths.filter((p) => !/^(dist\/|docs\/|package\.json$|README\.md$|CHANGELOG\.md$|LICENSE$)/.test(p))).toEqual(
      [],
    );
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.exports['.'].import.types).toBe('./dist/esm/index.d.ts');
    expect(pkg.exports['.'].require.types).toBe('./dist/cjs/index.d.ts');
    expect(pkg.exports['./backend'].import.types).toBe('./dist/esm/backend.d.ts');
    expect(pkg.exports['./backend'].require.types).toBe('./dist/cjs/backend.d.ts');
    for (const file of ['dist/esm/backend.js', 'dist/esm/backend.d.ts', 'dist/cjs/backend.js', 'dist/cjs/backend.d.ts'])
      expect(paths).toContain(file);
  });

  it('has types that resolve for both entries in every module mode (attw) and a package.json publint accepts', () => {
    expect(typesCheck.stdout).toContain('"nestjs-distributed-lock/backend"');
    expect({
      code: typesCheck.code,
      output: typesCheck.code === 0 ? '' : typesCheck.stdout + typesCheck.stderr,
    }).toEqual({ code: 0, output: '' });
    expect({ code: publintCheck.code, output: publintCheck.stdout + publintCheck.stderr }).toEqual({
      code: 0,
      output: expect.stringContaining('All good!'),
    });
  });

  it('installs the CLI as a bin that runs (`npx nestjs-distributed-lock --help`)', async () => {
    const app = join(work, 'esm-app');
    const help = await run(join(app, 'node_modules', '.bin', 'nestjs-distributed-lock'), ['--help'], app);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: nestjs-distributed-lock <command>');
  });

  it('publishes no .d.ts that refers to an optional peer (scripts/check-dts.mjs)', () => {
    expect(`${dtsCheck.stdout}${dtsCheck.stderr}`).toContain('check-dts:');
    expect({ code: dtsCheck.code, output: dtsCheck.stderr }).toEqual({ code: 0, output: '' });
  });

  describe.each([
    ['ESM app on NestJS 12 (import)', () => esm, '12.', /\/dist\/esm\/index\.js$/],
    ['CommonJS app on NestJS 11 (require)', () => cjs, '11.', /\/dist\/cjs\/index\.js$/],
  ])('%s', (_name, outcome, nestMajor, entryFile) => {
    it('resolves its own build and runs on the intended Nest major', () => {
      const result = resultOf(outcome());
      expect(result.nestVersion.startsWith(nestMajor)).toBe(true);
      expect(result.resolved).toMatch(entryFile);
    });

    it('exports the engine and error classes', () => {
      const result = resultOf(outcome());
      expect(result.exports).toEqual(
        expect.arrayContaining([
          'LockEngine',
          'MemoryBackend',
          'DistributedLockError',
          'LockTimeoutError',
          'LockLostError',
          'LockBackendError',
          'InvalidLockArgumentError',
        ]),
      );
      const errors = partOf(outcome(), 'errors');
      expect(errors.baseIsError).toBe(true);
      expect(errors.classes).toEqual({
        LockTimeoutError: true,
        LockLostError: true,
        LockBackendError: true,
        InvalidLockArgumentError: true,
      });
    });

    it('@Locked handlers read the route, message and parameter metadata of this Nest major, and a global filter of the app gets the exception classes', () => {
      const handlers = partOf(outcome(), 'handlers');
      expect(handlers.free).toEqual({
        status: 200,
        body: { id: '7', warehouse: 'north', tenant: 't1', key: 'order:7:north:t1' },
      });
      // The app's own global filter receives the @Locked route's LockBusyException (Retry-After from the request before, which held the key).
      expect(handlers.busyByKey).toEqual({
        status: 423,
        retryAfter: '1',
        body: { caught: 'LockBusyException', retryAfter: 1 },
      });
      expect(handlers.missingHeader).toBe(500);
      expect(handlers.byRequest).toMatchObject({ status: 200, body: { key: 'req:9', id: '9' } });
      expect(handlers.busyByHand).toMatchObject({
        status: 423,
        retryAfter: '1',
        body: { caught: 'LockBusyException', retryAfter: 1 },
      });
      expect(handlers.globalInterceptors).toBe(0);
      expect(handlers.httpNoParam).toContain(
        "names {params.id}, which no parameter of NoParam.show carries: add @Param('id')",
      );
      expect(handlers.rpcCarried).toBe('booted');
      expect(handlers.rpcNotCarried).toContain('add @Payload() data');
      expect(handlers.wsCarried).toBe('booted');
      expect(handlers.wsNotCarried).toContain('add @Payload() data (microservices) or @MessageBody() data (gateways)');
    });

    it('runs the engine on the memory backend: numeric fences, busy is a LockTimeoutError', () => {
      const engine = partOf(outcome(), 'engine');
      expect(typeof engine.fenceA).toBe('number');
      expect(engine.fenceB).toBeGreaterThan(engine.fenceA);
      expect(engine).toMatchObject({
        busyStatus: 'rejected',
        busyName: 'LockTimeoutError',
        busyIsTimeout: true,
        busyIsBase: true,
      });
    });

    it('names the driver to install when a configured backend misses it', () => {
      const missing = partOf(outcome(), 'missingDriver');
      expect(missing).toMatchObject({ status: 'rejected', isInvalidArgument: true, namesPackage: true });
    });

    it('exports DistributedLockModule, LockService and Locked', () => {
      const result = resultOf(outcome());
      expect(result.exports).toEqual(expect.arrayContaining(['DistributedLockModule', 'LockService', 'Locked']));
      if ('namedImports' in result) expect(result.namedImports).toBe(true); // the ESM app's `import { ... }`
    });

    it('bootstraps DistributedLockModule.forRoot({ backend: memory }): withLock, @Locked exclusion, skip, errors', () => {
      const nest = partOf(outcome(), 'nest');
      expect(nest.withLock).toMatchObject({
        key: 'single',
        abortedInside: false,
        expiresInFuture: true,
        currentIsLock: true,
        abortedAfter: true,
      });
      expect(typeof nest.withLock.fence).toBe('number');

      // Two concurrent withLock callers never overlap and get increasing fences.
      expect(nest.serial.maxActive).toBe(1);
      expect(nest.serial.fences.every((f: unknown) => typeof f === 'number')).toBe(true);
      expect(nest.serial.fences[1]).toBeGreaterThan(nest.serial.fences[0]);

      // @Locked on a provider method: the holder sees its lock; a concurrent call on the same key fails fast.
      expect(nest.guarded.first.key).toBe('job:7');
      expect(typeof nest.guarded.first.fence).toBe('number');
      expect(nest.guarded).toMatchObject({
        secondStatus: 'rejected',
        secondName: 'LockTimeoutError',
        secondIsTimeout: true,
        secondIsBase: true,
      });
      expect(nest.guarded.otherKeys).toEqual(['fulfilled', 'fulfilled']);
      expect(nest.guarded.fenceAfter).toBeGreaterThan(nest.guarded.first.fence);

      expect(nest.skip).toEqual({ first: 'ran', second: 'undefined' });
      expect(nest.positional).toBe('pos:x');
      expect(nest.currentOutside).toBe(true);
    });
  });

  it('does not load ioredis (or any driver) unless configured', () => {
    const esmApp = join(work, 'esm-app');
    expect(resultOf(esm)).toBeDefined();
    expect(existsSync(join(esmApp, 'node_modules/ioredis'))).toBe(false); // and the ESM app above ran without it
    const result = resultOf(cjs);
    expect(result.ioredisInstalled).toBe(true);
    expect(result.driversAfterRequire).toEqual([]);
    expect(result.driversAfterRun).toEqual([]);
  });
});
