import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Copies a build's esm/ to bench/nest/.lib/<name>, where it resolves bench/nest's own Nest and ioredis (the ones the
 * peers run on); returns the path of its index.js, the app's LIB.
 */
export function stageBuild(name, dir) {
  const target = join(here, '.lib', name);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  if (!existsSync(join(dir, 'esm/index.js')))
    throw new Error(`${dir}/esm/index.js not found: build it first (npm run build)`);
  cpSync(join(dir, 'esm'), join(target, 'esm'), { recursive: true });
  writeFileSync(join(target, 'package.json'), '{"type":"module"}\n');
  return join(target, 'esm/index.js');
}
