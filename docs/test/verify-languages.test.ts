/**
 * The "without the SDK" snippets in each language, run as the page shows them, against a real
 * signed delivery, a forged signature, an altered body, a prefixed header and GitHub's published
 * test vector. Python and Node always run; Go, Ruby and PHP run wherever Debian's packages are
 * installed (.ci/run installs them).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sign } from '@linkhooks/protocol';
import { buildEvent, generateSecret, signedDelivery } from '@linkhooks/receiver/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { expectUsage, expectVerdict, hasTool, runProgram } from './tools.js';

const example = (file: string) => fileURLToPath(new URL(`../examples/${file}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'linkhooks-docs-verify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const secret = generateSecret();
// A real delivery: the exact bytes the service sends, with a multibyte city name.
const delivery = signedDelivery({ secret, event: buildEvent('click', { data: { city: 'Zürich 🏙' } }) });
const bodyFile = join(dir, 'body.json');
writeFileSync(bodyFile, delivery.body);
const signature = delivery.headers['x-service-signature']!;
const alteredFile = join(dir, 'altered.json');
writeFileSync(alteredFile, JSON.stringify(JSON.parse(delivery.body), null, 1)); // same JSON, other bytes
const vectorFile = join(dir, 'vector.txt');
writeFileSync(vectorFile, 'Hello, World!');
const VECTOR = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

const cases: [string, string, string, string, 'valid' | 'invalid'][] = [
  ['a real signed delivery', bodyFile, secret, signature, 'valid'],
  ['uppercase hex', bodyFile, secret, signature.toUpperCase(), 'valid'],
  ['a forged signature', bodyFile, secret, sign(delivery.body, generateSecret()), 'invalid'],
  ['a re-serialised body', alteredFile, secret, signature, 'invalid'],
  ['a sha256= prefix', bodyFile, secret, `sha256=${signature}`, 'invalid'],
  ['the secret with a trailing newline', bodyFile, `${secret}\n`, signature, 'invalid'],
  ["GitHub's published vector", vectorFile, "It's a Secret to Everybody", VECTOR, 'valid'],
];

const languages: { name: string; tool: string; versionArg?: string; command: (file: string) => string[] }[] =
  [
    { name: 'Python', tool: 'python3', command: (f) => ['python3', f] },
    { name: 'Node', tool: 'node', command: (f) => [process.execPath, f] },
    { name: 'Go', tool: 'go', versionArg: 'version', command: (f) => ['go', 'run', f] },
    { name: 'Ruby', tool: 'ruby', command: (f) => ['ruby', f] },
    { name: 'PHP', tool: 'php', command: (f) => ['php', f] },
  ];
const files: Record<string, string> = {
  Python: 'verify.py',
  Node: 'verify-node.mjs',
  Go: 'verify.go',
  Ruby: 'verify.rb',
  PHP: 'verify.php',
};

for (const language of languages) {
  describe(`${language.name}: verify${files[language.name]!.slice(files[language.name]!.indexOf('.'))}`, () => {
    const available = hasTool(language.tool, language.versionArg);
    const command = language.command(example(files[language.name]!));
    it.runIf(available).each(cases)('%s', (_label, file, key, header, expected) => {
      expectVerdict(runProgram(command, [file, key, header], dir), expected);
    });
    it.runIf(available)('says how to run it when an argument is missing, and fails', () => {
      // An unset shell variable for the signature: two arguments instead of three.
      expectUsage(runProgram(command, [cases[0]![1], cases[0]![2]], dir));
    });
  });
}

describe('the reference implementation agrees', () => {
  it('@linkhooks/protocol signs the vector the same way', () => {
    expect(sign('Hello, World!', "It's a Secret to Everybody")).toBe(VECTOR);
  });
});
