/**
 * The dashboard guide's pictures (made by scripts/dashboard-screenshots.mjs, committed under
 * public/dashboard/): each one the guide shows exists, says what it shows, and stays small; each
 * one in the folder is shown.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const docs = fileURLToPath(new URL('..', import.meta.url));
const guide = readFileSync(`${docs}/guide/dashboard.md`, 'utf8');
const pictures = [...guide.matchAll(/!\[([^\]]*)\]\((\/dashboard\/[^)\s]+)\)/g)].map((m) => ({
  alt: m[1]!,
  path: m[2]!,
}));

describe('the dashboard guide', () => {
  it('shows pictures', () => {
    expect(pictures.length).toBeGreaterThanOrEqual(5);
  });

  it.each(pictures)(
    '$path exists, is a PNG at most 1280 px wide and 150 KB, and has alt text',
    ({ alt, path }) => {
      const file = `${docs}/public${path}`;
      const bytes = readFileSync(file);
      expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect(bytes.readUInt32BE(16), 'width').toBeLessThanOrEqual(1280);
      expect(statSync(file).size).toBeLessThanOrEqual(150 * 1024);
      expect(alt.length).toBeGreaterThan(10);
    },
  );

  it('shows every picture in public/dashboard/', () => {
    const shown = new Set(pictures.map((p) => p.path));
    const files = readdirSync(`${docs}/public/dashboard`).map((name) => `/dashboard/${name}`);
    expect(files.filter((file) => !shown.has(file))).toEqual([]);
  });
});
