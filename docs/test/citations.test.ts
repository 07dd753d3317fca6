/**
 * Every reference in the code resolves inside the repository: comments cite the numbered items of
 * docs/platform/design.md as `design R12`, `design I3`, `design D1` or `design C4` (a range as
 * `design I2–I5`), never a document a reader cannot open, and each cited item has its heading.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const DESIGN_PAGE = 'docs/platform/design.md';
const SELF = 'docs/test/citations.test.ts';
const SEARCHED = ['packages', 'apps', 'docs', 'scripts', '.changeset'];
const EXTENSIONS = new Set(
  'ts tsx mts cts js jsx mjs cjs md json sql html css sh yaml yml py rb go php'
    .split(' ')
    .map((e) => `.${e}`),
);
/** Generated or built output: the generated references cite nothing a source does not. */
const SKIPPED = /(^|\/)(node_modules|dist|\.next|\.vitepress\/cache)\/|^docs\/reference\//;

/**
 * A citation of a document outside the repository. Case-sensitive, and `_` is a word character,
 * so identifiers such as `SPEC_EVENTS` and the word "spec" in code do not match.
 */
const OUTSIDE = /\b(SPEC|DESIGN|CONVENTIONS)\b/;
/** `design R12`, or a range `design I2–I5` / `design I2-I5`. */
const CITATION = /\bdesign ([RIDC])(\d+)(?:[–-]\1?(\d+))?\b/g;

/** The repository's source and markdown files: tracked, plus new files not yet added (not ignored). */
function sourceFiles(): string[] {
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...SEARCHED],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return [...new Set(listed.split('\0'))]
    .filter((f) => f && f !== SELF && EXTENSIONS.has(extname(f)) && !SKIPPED.test(f))
    .filter((f) => existsSync(join(root, f)))
    .sort();
}

type Line = { where: string; text: string };

function lines(files: string[]): Line[] {
  return files.flatMap((file) =>
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .map((text, i) => ({ where: `${file}:${i + 1}`, text })),
  );
}

/** The item ids that have a heading on the design page, e.g. `### R12 Retry schedule` → R12. */
function designItems(): Set<string> {
  const page = readFileSync(join(root, DESIGN_PAGE), 'utf8');
  return new Set([...page.matchAll(/^### ([RIDC]\d+) \S/gm)].map((m) => m[1]!));
}

describe('citations', () => {
  const all = lines(sourceFiles());

  it('reads the files it checks', () => {
    expect(all.some((l) => l.where.startsWith('packages/protocol/src/'))).toBe(true);
    expect(all.some((l) => l.where.startsWith(`${DESIGN_PAGE}:`))).toBe(true);
  });

  it('cite no document outside the repository', () => {
    const outside = all.filter((l) => OUTSIDE.test(l.text)).map((l) => `${l.where}: ${l.text.trim()}`);
    expect(outside, 'cite the items of docs/platform/design.md instead, as "design R12"').toEqual([]);
  });

  it('name only items that docs/platform/design.md has a heading for', () => {
    const items = designItems();
    const unknown: string[] = [];
    let cited = 0;
    for (const { where, text } of all) {
      for (const [match, letter, from, to] of text.matchAll(CITATION)) {
        for (let n = Number(from); n <= Number(to ?? from); n++) {
          cited++;
          if (!items.has(`${letter}${n}`)) unknown.push(`${where}: ${letter}${n} in "${match}"`);
        }
      }
    }
    expect(cited).toBeGreaterThan(0);
    expect(unknown, `no such heading on ${DESIGN_PAGE}`).toEqual([]);
  });

  // Numbers only grow: work done side by side takes decision numbers apart (D50…), so the D group
  // may skip some until the items in between arrive, but a number never means two things.
  it('number the items of each group once, in increasing order from 1, and keep I1–I6', () => {
    const page = readFileSync(join(root, DESIGN_PAGE), 'utf8');
    const ids = [...page.matchAll(/^### ([RIDC])(\d+) /gm)].map((m) => `${m[1]}${m[2]}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const letter of ['R', 'I', 'D', 'C']) {
      const numbers = ids.filter((id) => id[0] === letter).map((id) => Number(id.slice(1)));
      if (letter === 'D') {
        expect(numbers[0], letter).toBe(1);
        expect(numbers, letter).toEqual([...numbers].sort((a, b) => a - b));
      } else {
        expect(numbers, letter).toEqual(numbers.map((_, i) => i + 1));
      }
    }
    expect(ids.filter((id) => id[0] === 'I')).toEqual(['I1', 'I2', 'I3', 'I4', 'I5', 'I6']);
  });
});
