import type { ViteUserConfig } from 'vitest/config';

/** What the sender's two vitest projects (vitest.config.ts, vitest.unit.config.ts) share. */
export const shared = {
  // The stores' migrations are .sql files, imported as text (tsup's `text` loader in the build).
  plugins: [
    {
      name: 'sql-as-text',
      transform(code: string, id: string) {
        return id.endsWith('.sql') ? { code: `export default ${JSON.stringify(code)};`, map: null } : null;
      },
    },
  ],
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
} satisfies ViteUserConfig;
