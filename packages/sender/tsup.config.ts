import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', api: 'src/api/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: false,
    sourcemap: true,
    target: 'es2022',
    external: ['better-sqlite3', 'pg', 'express', '@linkhooks/protocol'],
    loader: { '.sql': 'text' },
    // import.meta.url in the CJS build too (the dashboard's files are found beside the entry).
    shims: true,
  },
  {
    // The service CLI: ESM only, with its shebang (the package's `bin`); and the delivery thread's
    // program, which src/delivery/threaded-client.ts starts from this folder, for the library's
    // builds and the CLI alike.
    entry: { cli: 'src/cli/main.ts', 'delivery-thread': 'src/delivery/delivery-thread.ts' },
    format: ['esm'],
    dts: false,
    clean: false,
    sourcemap: true,
    target: 'es2022',
    external: ['better-sqlite3', 'pg', 'express', '@linkhooks/protocol'],
    loader: { '.sql': 'text' },
  },
]);
