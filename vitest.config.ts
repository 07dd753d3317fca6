import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suite's longest files, longest first (a run of `.ci/run` on a fresh clone: 20 s to 5 min each
 * on a 2-core machine). They start before the rest, so that the run ends on short files with both
 * workers busy, rather than on one of these while the other worker waits: the default order runs
 * project after project, and a fresh clone has no timings of its own to sort by.
 */
const LONGEST = [
  'docs/test/platform-getting-started.test.ts',
  'docs/test/as-pasted.test.ts',
  'packages/sender/test/crash.test.ts',
  'packages/receiver/test/types.test.ts',
  'docs/test/site.test.ts',
  'packages/receiver/test/cli.test.ts',
  'packages/sender/test/postgres-store.test.ts',
  'packages/receiver/test/next.test.ts',
  'packages/sender/test/log-pages.test.ts',
  'packages/sender/test/noisy-neighbour.test.ts',
  'packages/sender/test/cli-secrets-at-rest.test.ts',
  'packages/sender/test/cli.test.ts',
  'apps/reference/test/refused-start.test.ts',
  'packages/sender/test/viral-tenant.test.ts',
];

// A file renamed or removed would lose its place without a word.
const gone = LONGEST.filter((path) => !existsSync(new URL(path, import.meta.url)));
if (gone.length > 0)
  throw new Error(`vitest.config.ts lists test files that are not there: ${gone.join(', ')}`);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return at === -1 ? LONGEST.length : at;
    };
    // Stable: the rest keep the default order (which uses the timings of earlier runs, when there are).
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    projects: ['packages/*', 'packages/sender/vitest.unit.config.ts', 'apps/*', 'docs'],
    // Three files at a time on a 2-core machine: with two, the cores stood idle a tenth of the run
    // while files waited on npm, leases running out and child processes, and `vitest run` took 670 s
    // on a fresh clone; with three, 572 s (the same machine, the same hour).
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
  },
});
