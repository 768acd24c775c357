// The paired engine bench of the working tree against a build of a git ref (a release tag, `main`,
// a commit): builds the ref once in a temporary worktree (kept in node_modules/.ab-<commit>/ for the
// next run), then runs bench/ab.mjs (alternating fresh processes on one redis-server) at each
// `--callers` count against the current dist/. `npm run bench:ab` builds the working tree first.
// `--interleaved` runs bench/ab-interleaved.mjs instead (both builds in one process, finely
// interleaved batches: steadier on a busy machine; `--pairs`).
//   npm run bench:ab -- --ref main [--callers 1,64] [--rounds 7] [--seconds 1.5] [--interleaved [--pairs 300]]
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    ref: { type: 'string', default: 'main' },
    callers: { type: 'string', default: '1,64' },
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '1.5' },
    interleaved: { type: 'boolean', default: false },
    pairs: { type: 'string', default: '300' },
  },
});
const repo = resolve(new URL('..', import.meta.url).pathname);
const git = (...args) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();

const commit = git('rev-parse', '--verify', `${values.ref}^{commit}`);
const build = join(repo, 'node_modules', `.ab-${commit.slice(0, 12)}`);
if (!existsSync(join(build, 'esm', 'index.js'))) {
  const tree = mkdtempSync(join(tmpdir(), 'ndl-ab-'));
  console.log(`building ${values.ref} (${commit.slice(0, 12)}) in ${tree}`);
  try {
    git('worktree', 'add', '--detach', tree, commit);
    // The ref is built with this tree's dependencies; its build lands inside the repo so it finds the drivers.
    symlinkSync(join(repo, 'node_modules'), join(tree, 'node_modules'));
    const built = spawnSync('npm', ['run', 'build'], { cwd: tree, stdio: 'inherit' });
    if (built.status !== 0) throw new Error(`building ${values.ref} failed`);
    cpSync(join(tree, 'dist'), build, { recursive: true });
  } finally {
    git('worktree', 'remove', '--force', tree);
    rmSync(tree, { recursive: true, force: true });
  }
}

for (const callers of values.callers.split(',')) {
  const builds = [
    '--a',
    join(build, 'esm', 'index.js'),
    '--b',
    join(repo, 'dist', 'esm', 'index.js'),
    '--callers',
    callers,
  ];
  const args = values.interleaved
    ? [
        join(repo, 'bench', 'ab-interleaved.mjs'),
        ...builds,
        '--pairs',
        values.pairs,
        '--batch',
        Number(callers) > 1 ? '1000' : '100',
      ]
    : [join(repo, 'bench', 'ab.mjs'), ...builds, '--rounds', values.rounds, '--seconds', values.seconds];
  const ab = spawnSync(process.execPath, args, { cwd: repo, stdio: 'inherit' });
  if (ab.status !== 0) process.exitCode = ab.status ?? 1;
}
console.log(`A = ${values.ref} (${commit.slice(0, 12)}), B = this working tree (dist/)`);
