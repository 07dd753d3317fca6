import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  sourcemap: true,
  target: 'es2022',
  external: ['express', 'fastify', 'next', 'ioredis', 'redis', '@linkhooks/protocol'],
};

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      testing: 'src/testing.ts',
      redis: 'src/idempotency/redis-store.ts',
      'adapters/express': 'src/adapters/express.ts',
      'adapters/fastify': 'src/adapters/fastify.ts',
      'adapters/next': 'src/adapters/next.ts',
      'adapters/node': 'src/adapters/node.ts',
      'adapters/fetch': 'src/adapters/fetch.ts',
    },
    format: ['esm', 'cjs'],
    dts: true,
    treeshake: true,
    ...shared,
  },
  // The `linkhooks` command line: ESM only, with its shebang (the package's `bin`).
  { entry: { cli: 'src/cli/main.ts' }, format: ['esm'], dts: false, ...shared },
]);
