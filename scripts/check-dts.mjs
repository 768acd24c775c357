#!/usr/bin/env node
// Fails if any published .d.ts file refers to an optional peer dependency (a store driver).
// A user who installs only the drivers they use must be able to type-check against the
// package, so declarations may only describe driver objects loosely (`unknown`, own types).
//
// Usage: node scripts/check-dts.mjs [dir ...]   (default: dist/esm dist/cjs, relative to cwd)
// The optional peers are those marked optional in ./package.json, plus the known drivers.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const KNOWN_DRIVERS = ['ioredis', 'node-zookeeper-client', 'etcd3', 'pg', 'mysql2'];

function optionalPeers() {
  const peers = new Set(KNOWN_DRIVERS);
  if (existsSync('package.json')) {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    for (const [name, meta] of Object.entries(pkg.peerDependenciesMeta ?? {})) {
      if (meta?.optional) peers.add(name);
    }
  }
  return [...peers];
}

function declarationFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...declarationFiles(path));
    else if (/\.d\.[cm]?ts$/.test(entry)) out.push(path);
  }
  return out;
}

/** Every module name a declaration file refers to, with its line. */
function moduleReferences(file) {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const refs = [];
  const add = (name, pos) => refs.push({ name, line: sf.getLineAndCharacterOfPosition(pos).line + 1 });
  for (const ref of sf.typeReferenceDirectives) add(ref.fileName, ref.pos);
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.getStart());
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression.text, node.getStart());
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      add(node.argument.literal.text, node.getStart());
    } else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
      add(node.name.text, node.getStart()); // `declare module 'ioredis'` augmentation
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return refs;
}

const dirs = process.argv.slice(2).length ? process.argv.slice(2) : ['dist/esm', 'dist/cjs'];
const peers = optionalPeers();
const isPeer = (name) =>
  peers.some((peer) => name === peer || name.startsWith(`${peer}/`) || name === `@types/${peer}`);

const problems = [];
let checked = 0;
for (const dir of dirs) {
  if (!existsSync(dir)) {
    problems.push(`${dir}: missing (build first)`);
    continue;
  }
  const files = declarationFiles(dir);
  if (files.length === 0) problems.push(`${dir}: no .d.ts files`);
  for (const file of files) {
    checked++;
    for (const ref of moduleReferences(file)) {
      if (isPeer(ref.name))
        problems.push(`${relative(process.cwd(), file)}:${ref.line}: refers to optional peer '${ref.name}'`);
    }
  }
}

if (problems.length) {
  console.error(`check-dts: ${problems.length} problem(s) in published declarations:`);
  for (const p of problems) console.error(`  ${p}`);
  console.error(
    `Optional peers (${peers.join(', ')}) must not appear in .d.ts files: type driver objects loosely or with own interfaces, and use 'import type' only in non-exported code.`,
  );
  process.exit(1);
}
console.log(
  `check-dts: ${checked} declaration files in ${dirs.join(', ')} refer to no optional peer (${peers.join(', ')}).`,
);
