/**
 * Every code block the README and the docs present as complete compiles as pasted. A `ts`
 * block is complete when it starts with an `import`, or with a comment naming the file it is
 * (`// drizzle.config.ts`); blocks that name a file under examples/ are that file word for word
 * (readme.test.ts) and are type-checked with the repository, so they are left out here. Any
 * other block is a fragment (an option, a call) and says so by how it starts.
 *
 * Each block is type-checked on its own, with the repository's compiler options, as a module
 * beside the package's sources: `mutation-guard/...` resolves to src/, as the package's
 * `exports` resolve it for users.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(`${ROOT}docs`)
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Block {
  page: string;
  line: number;
  code: string;
}

const FILE_NAME = /^\/\/ [\w./-]+\.ts\b/;
const MIRROR = /^\/\/ examples\//;

/** The complete `ts` blocks of a page, with the line each starts on. */
function completeBlocks(page: string): Block[] {
  const text = readFileSync(`${ROOT}${page}`, 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
    .map((match) => ({
      page,
      line: text.slice(0, match.index).split('\n').length + 1,
      code: match[1]!,
    }))
    .filter(({ code }) => /^import /.test(code) || (FILE_NAME.test(code) && !MIRROR.test(code)));
}

const blocks = pages.flatMap(completeBlocks);

/** The compiler's complaints about each block, as `page:line: message`. */
function typeErrors(checked: Block[]): string[] {
  const config = ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  // Beside the sources (so that node_modules and the `paths` resolve as for src/), in a
  // folder of its own so that no name meets a real file.
  const files = new Map<string, Block>(
    checked.map((block, i) => [`${ROOT}docs-blocks/block-${i}.ts`, block]),
  );
  const host = ts.createCompilerHost(options);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name)?.code ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const block = files.get(name);
    return block
      ? ts.createSourceFile(name, block.code, language)
      : getSourceFile.call(host, name, language, ...rest);
  };
  const program = ts.createProgram([...files.keys()], { ...options, noEmit: true }, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const block = diagnostic.file && files.get(diagnostic.file.fileName);
    if (!block || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
    return `${block.page}:${block.line + line}: ${message}`;
  });
}

describe('complete code blocks of the README and the docs', () => {
  it('are found: the wiring pages and the Postgres transaction type have some', () => {
    const where = new Set(blocks.map((block) => block.page));
    for (const page of ['docs/trpc.md', 'docs/postgres.md', 'docs/migrations.md']) {
      expect(where, page).toContain(page);
    }
  });

  it('compile as pasted', { timeout: 180_000 }, () => {
    expect(typeErrors(blocks)).toEqual([]);
  });
});
