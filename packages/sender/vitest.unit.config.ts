import { defineConfig } from 'vitest/config';
import { shared } from './vitest.shared.js';

// The unit tests beside the code (src/), in one module graph rather than a fresh one per file:
// importing it again for each of these short files took half their time.
export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    name: 'sender-unit',
    include: ['src/**/*.test.ts'],
    isolate: false,
  },
});
