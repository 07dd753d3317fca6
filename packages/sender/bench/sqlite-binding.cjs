// Preloaded (--require) by bench/runtime.mjs into every process and thread of a run on another
// Node.js: better-sqlite3's native part as built for that Node.js (LINKHOOKS_BENCH_SQLITE_BINDING),
// loaded in place of the workspace's, which was built for the Node.js it was installed with.
const binding = process.env.LINKHOOKS_BENCH_SQLITE_BINDING;
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  const file = binding && /[\\/]better_sqlite3\.node$/.test(filename) ? binding : filename;
  return dlopen.call(this, module, file, ...rest);
};
