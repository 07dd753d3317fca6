/**
 * Reads a guide the way a reader sees it: the markdown with each `<<< @/examples/…` include replaced
 * by the file it shows, split into code blocks and the prose line before each.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const docs = fileURLToPath(new URL('..', import.meta.url));

export interface CodeBlock {
  lang: string;
  code: string;
  /** The last non-empty prose line before the block ("Save this as `server.mjs`:"). */
  before: string;
  /** The file name shown on the block (```js [server.mjs]), when it has one. */
  title?: string;
}

/**
 * The page's markdown with its includes resolved, as VitePress renders them (whole files): the
 * markdown parts it shares with other pages (`<!--@include: ./parts/….md-->`), then the code files.
 */
export function resolvedPage(page: string): string {
  const source = readFileSync(`${docs}/${page}`, 'utf8').replace(
    /^<!--@include: (\S+?\.md)-->$/gm,
    (_, part: string) => readFileSync(join(docs, dirname(page), part), 'utf8').replace(/\n$/, ''),
  );
  return source.replace(
    /^<<< @\/(\S+?)(?:\{(\w+)\})?(?: \[([^\]\n]+)\])?$/gm,
    (_, file: string, lang?: string, title?: string) => {
      const code = readFileSync(`${docs}/${file}`, 'utf8').replace(/\n$/, '');
      return `\`\`\`${lang ?? file.split('.').pop()}${title ? ` [${title}]` : ''}\n${code}\n\`\`\``;
    },
  );
}

export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const fence = /^```(\w*)(?: \[([^\]\n]+)\])?[^\n]*\n([\s\S]*?)^```$/gm;
  let end = 0;
  for (const match of markdown.matchAll(fence)) {
    const prose = markdown
      .slice(end, match.index)
      .split('\n')
      // A code group's own lines (`::: code-group`, `:::`) are layout, not prose.
      .filter((line) => line.trim() !== '' && !line.startsWith(':::'));
    blocks.push({
      lang: match[1]!,
      code: match[3]!,
      before: prose.at(-1) ?? '',
      ...(match[2] ? { title: match[2] } : {}),
    });
    end = match.index + match[0].length;
  }
  return blocks;
}

export interface RunnablePage {
  /** The setup commands (`npm init -y`, `npm install …`), in order. */
  setup: string[];
  /** The packages the page's `npm install` lines name. */
  packages: string[];
  /** The file to save, by the name or path the page gives (`server.mjs`, `app/…/route.ts`). */
  file: { name: string; code: string };
  /** The command that starts the server (`LINKHOOKS_SECRET=… node server.mjs`, `… npx next dev`). */
  start: string;
  /** What the server prints once it serves (the pages' `Listening on`, Next's `Ready`, Bun's line). */
  ready: RegExp;
  /** The `npx linkhooks trigger …` line. */
  trigger: string;
  /** What the page says the server prints when the handler runs. */
  printed: string[];
  /** The page's TypeScript steps, when it gives them: the block that runs the file with `tsx`. */
  typescript?: { setup: string[]; packages: string[] };
}

const SHELL = new Set(['sh', 'bash', 'shell']);

/** The command a page's server file runs with. */
export type Runner = 'node' | 'deno' | 'bun';
/** What a server prints once it serves: the pages' own line, `deno serve`'s and Bun's. */
const READY: Record<Runner, RegExp> = {
  node: /Listening on/,
  deno: /Listening on/,
  bun: /Started development server/,
};
const NEXT_DEV = /(^|\s)npx next dev$/;
const lines = (block: CodeBlock) =>
  block.code.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));

/**
 * The parts of a page a reader follows to run it, its server started with `runner` (`node`, or the
 * `deno` or `bun` of a page that gives a command for each); throws, naming what is missing, when
 * the page does not give one of them.
 */
export function runnablePage(page: string, runner: Runner = 'node'): RunnablePage {
  const blocks = codeBlocks(resolvedPage(page));
  const missing = (what: string) => new Error(`${page} does not give ${what}`);
  const setupAt = blocks.findIndex(
    (b) => SHELL.has(b.lang) && lines(b).some((l) => l.startsWith('npm install')),
  );
  if (setupAt < 0) throw missing('an `npm install` line');
  const setup = lines(blocks[setupAt]!).filter((l) => l.startsWith('npm '));
  const packages = setup.flatMap((l) => installed(l));

  const saved = blocks.findIndex((b, i) => i > setupAt && /Save this as `[^`]+`/.test(b.before));
  if (saved < 0) throw missing('a file to save ("Save this as `…`:" before its code)');
  const name = /Save this as `([^`]+)`/.exec(blocks[saved]!.before)![1]!;
  if (blocks[saved]!.title !== name) throw missing(`the file name ${name} on its code block`);
  const after = blocks.slice(saved + 1);
  const shell = after.filter((b) => SHELL.has(b.lang)).flatMap(lines);
  // A server file runs with the runner (its options before the file); a route file (a path) is
  // served by Next's dev server.
  const runs = name.includes('/')
    ? NEXT_DEV
    : new RegExp(`(^|\\s)${runner}(\\s\\S+)*\\s${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  const start = shell.find((l) => runs.test(l));
  if (!start) throw missing(`the command that runs ${name} with ${runner}`);
  const trigger = shell.find((l) => l.startsWith('npx linkhooks trigger '));
  if (!trigger) throw missing('an `npx linkhooks trigger` line');
  const output = after.find((b) => b.lang === 'text');
  if (!output) throw missing('what the server prints (a ```text block after the trigger line)');
  const ts = blocks.find((b) => SHELL.has(b.lang) && lines(b).some((l) => /\bnpx tsx /.test(l)));
  const tsSetup = ts ? lines(ts).filter((l) => l.startsWith('npm ')) : [];
  return {
    setup,
    packages,
    ...(ts && {
      typescript: { setup: tsSetup, packages: tsSetup.flatMap((l) => installed(l)) },
    }),
    file: { name, code: blocks[saved]!.code },
    start,
    ready: NEXT_DEV.test(start) ? /Ready in/ : READY[runner],
    trigger,
    printed: lines(output),
  };
}

/** The packages an `npm install …` line names (none for another command). */
function installed(command: string): string[] {
  const [npm, verb, ...words] = command.split(/\s+/);
  if (npm !== 'npm' || (verb !== 'install' && verb !== 'i')) return [];
  return words.filter((word) => !word.startsWith('-'));
}

/** The packages a module imports by bare name (`express`, `@hono/node-server`), not `node:` ones. */
export function importedPackages(code: string): string[] {
  const names = [...code.matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
  return [
    ...new Set(
      names
        .filter((n) => !n.startsWith('node:') && !n.startsWith('.'))
        .map((n) =>
          n
            .split('/')
            .slice(0, n.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    ),
  ];
}
