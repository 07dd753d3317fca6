import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'packages/sender/vitest.unit.config.ts', 'apps/*', 'docs'],
    // Most test files wait on servers, databases and child processes rather than compute: two
    // files at a time on a 2-core machine.
    maxWorkers: 2,
  },
});
