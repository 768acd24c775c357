#!/usr/bin/env node
// Checks that lib/'s imports run one way: each room (a folder of lib/, or a top-level file) may
// import only the rooms below it in LAYERS, and no files import each other in a circle (type
// imports count: a circle of types is still two files that cannot be read apart), and that every
// file name is kebab-case (`redis-claim.ts`, not `redis.claim.ts` or `redisClaim.ts`).
// Usage: node scripts/check-layers.mjs   (exit 1 and a list of offending imports otherwise)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB = resolve(dirname(fileURLToPath(import.meta.url)), '../lib');

/** Bottom first. A room may import rooms listed before it (and itself). */
export const LAYERS = [
  ['errors.ts'],
  ['util'],
  ['engine'],
  ['backends', 'metrics', 'fencing', 'testing'],
  ['nest'],
  ['leader', 'admin', 'health', 'cli'],
  ['module'],
  ['index.ts', 'backend.ts'],
];

/** `lock-engine.ts`: lower-case words of letters and digits joined by '-'. */
export const isKebabCaseFile = (name) => /^[a-z0-9]+(-[a-z0-9]+)*\.ts$/.test(name);

const levelOf = new Map(LAYERS.flatMap((rooms, level) => rooms.map((room) => [room, level])));

function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith('.ts') ? [path] : [];
  });
}

const roomOf = (file) => relative(LIB, file).split('/')[0];

/** The lib files a file imports (static `import`/`export … from`, type-only included). */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/g)].map((m) => m[1]);
  return specs.map((spec) => resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
}

export function checkLayers() {
  const files = sourceFiles(LIB);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  const problems = [];
  for (const file of files) {
    if (!isKebabCaseFile(basename(file)))
      problems.push(
        `${relative(LIB, file)}: file names in lib/ are kebab-case (lower-case words joined by '-', as in lock-engine.ts)`,
      );
  }
  for (const room of new Set(files.map(roomOf))) {
    if (!levelOf.has(room)) problems.push(`lib/${room} is in no layer of scripts/check-layers.mjs: place it`);
  }
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = roomOf(file);
      const to = roomOf(target);
      if (levelOf.get(to) > levelOf.get(from) || (levelOf.get(to) === levelOf.get(from) && to !== from)) {
        problems.push(
          `${relative(LIB, file)} imports ${relative(LIB, target)}: ${from} may not import ${to} (it is not below it)`,
        );
      }
    }
  }
  for (const circle of circlesOf(graph))
    problems.push(`circle: ${circle.map((file) => relative(LIB, file)).join(' -> ')}`);
  return problems;
}

/** Strongly connected components of more than one file (Tarjan). */
function circlesOf(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const circles = [];
  let next = 0;
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) circles.push(component.reverse());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkLayers();
  for (const problem of problems) console.error(problem);
  console.log(
    problems.length === 0
      ? 'lib/: every import runs down the layers, no circles, every file name kebab-case'
      : `${problems.length} problem(s)`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}
