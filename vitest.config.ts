import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'docs'],
    // Most test files wait on servers, databases and child processes rather than compute: two
    // files at a time on a 2-core machine keep the whole suite well inside its time budget.
    maxWorkers: 2,
  },
});
