import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The stores' migrations are .sql files, imported as text (tsup's `text` loader in the build).
  plugins: [
    {
      name: 'sql-as-text',
      transform(code, id) {
        return id.endsWith('.sql') ? { code: `export default ${JSON.stringify(code)};`, map: null } : null;
      },
    },
  ],
  test: {
    name: 'sender',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
