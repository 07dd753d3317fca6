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
    // The delivery thread's program (src/delivery/threaded-client.ts starts it from this folder),
    // for the library's builds and the CLI alike.
    entry: { 'delivery-thread': 'src/delivery/delivery-thread.ts' },
    format: ['esm'],
    dts: false,
    clean: false,
    sourcemap: true,
    target: 'es2022',
  },
  {
    // The service CLI: ESM only, with its shebang (the package's `bin`).
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    dts: false,
    clean: false,
    sourcemap: true,
    target: 'es2022',
    external: ['better-sqlite3', 'pg', 'express', '@linkhooks/protocol'],
    loader: { '.sql': 'text' },
  },
]);
