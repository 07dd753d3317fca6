import { defineConfig } from 'vitest/config';
import { shared } from './vitest.shared.js';

// The integration tests (test/): real servers, stores and processes, each file in a fresh module
// graph. The unit tests beside the code run as the project `sender-unit` (vitest.unit.config.ts).
export default defineConfig({
  ...shared,
  test: {
    ...shared.test,
    name: 'sender',
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
  },
});
