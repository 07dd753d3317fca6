import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'sender',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
