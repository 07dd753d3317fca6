import { defineConfig } from 'tsup';

export default defineConfig({
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
  clean: true,
  sourcemap: true,
  target: 'es2022',
  treeshake: true,
  external: ['express', 'fastify', 'next', 'ioredis', 'redis', '@linkhooks/protocol'],
});
