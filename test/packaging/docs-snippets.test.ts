/**
 * Every ```ts block of README.md and docs/ (except the generated API reference) type-checks as a
 * module of its own against the built package, imported by its name as an application would
 * (`nestjs-distributed-lock` resolves to this package's own exports: dist/esm/*.d.ts), with the
 * repository's node_modules for Nest and the drivers. A block fenced ```ts fragment is skipped:
 * the convention is stated at the top of docs/README.md. The blocks are served to one TypeScript
 * program from memory, so nothing is written to disk and the check takes a few seconds.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { codeBlocks } from '../support/markdown.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Virtual files live in a folder of the package, so that the package's own name resolves through its `exports`. */
const SNIPPETS = join(ROOT, '.docs-snippets');

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (path !== 'docs/api') walk(path); // generated from the TSDoc
      } else if (entry.name.endsWith('.md')) {
        files.push(path);
      }
    }
  };
  walk('docs');
  return files;
}

interface Snippet {
  origin: string;
  fileName: string;
  code: string;
}

function snippets(): { checked: Snippet[]; fragments: number } {
  const checked: Snippet[] = [];
  let fragments = 0;
  for (const file of markdownFiles()) {
    for (const block of codeBlocks(readFileSync(join(ROOT, file), 'utf8'))) {
      const [language, ...flags] = block.info.split(/\s+/);
      if (language !== 'ts' && language !== 'typescript') continue;
      if (flags.includes('fragment')) {
        fragments += 1;
        continue;
      }
      const origin = `${file}:${block.line}`;
      const fileName = join(SNIPPETS, `${file.replace(/[/.]/g, '_')}_${block.line}.ts`);
      checked.push({ origin, fileName, code: `${block.code}\nexport {};\n` });
    }
  }
  return { checked, fragments };
}

function typeCheck(files: Snippet[]): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.esnext.disposable.d.ts'],
    types: ['node'],
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const byName = new Map(files.map((f) => [f.fileName, f]));
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => byName.has(name) || fileExists.call(host, name);
  host.readFile = (name) => byName.get(name)?.code ?? readFile.call(host, name);
  host.getSourceFile = (name, language, onError, create) => {
    const snippet = byName.get(name);
    return snippet
      ? ts.createSourceFile(name, snippet.code, language)
      : getSourceFile.call(host, name, language, onError, create);
  };
  const program = ts.createProgram([...byName.keys()], options, host);
  const errors: string[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const snippet = diagnostic.file && byName.get(diagnostic.file.fileName);
    const where =
      snippet && diagnostic.start !== undefined
        ? `${snippet.origin} (+${diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start).line} lines)`
        : diagnostic.file
          ? relative(ROOT, diagnostic.file.fileName)
          : 'options';
    errors.push(`${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
  }
  return errors;
}

describe('code blocks in the README and docs/', () => {
  const { checked, fragments } = snippets();

  it('finds the blocks (README included) and the fragments it skips', () => {
    expect(checked.some((s) => s.origin.startsWith('README.md:'))).toBe(true);
    expect(checked.length).toBeGreaterThan(fragments);
  });

  it('every ```ts block compiles against the built package', () => {
    expect(typeCheck(checked)).toEqual([]);
  }, 60_000);

  it('reports a block that does not compile, with its file and line (the check itself)', () => {
    const broken = {
      origin: 'x.md:3',
      fileName: join(SNIPPETS, 'probe.ts'),
      code: "import { LockService } from 'nestjs-distributed-lock';\ndeclare const s: LockService;\ns.acquireNothing();\nexport {};\n",
    };
    const errors = typeCheck([broken]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^x\.md:3 \(\+2 lines\): Property 'acquireNothing' does not exist/);
  }, 60_000);
});
