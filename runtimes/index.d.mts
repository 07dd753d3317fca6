export type Runtime = 'node22' | 'node24' | 'bun' | 'deno' | 'workerd';
/** The runtimes of the registry's Node.js builds. */
export type NodeRuntime = 'node22' | 'node24';
/** The same, as a list: each test or bench that runs on every Node.js build takes them from here. */
export declare const NODE_RUNTIMES: readonly NodeRuntime[];
/** The package folder of runtime `name` (a Node.js one holds its headers under include/), or null where it is not installed. */
export declare function runtimeHome(name: Runtime): string | null;
/** The folder holding runtime `name`'s command (`node`, `bun`, `deno` or `workerd`), to put first on a PATH; null where this machine does not have it. */
export declare function runtimeBin(name: Runtime): string | null;
/** The command runtime `name` is run with, as a shell finds it on the PATH: node, bun, deno or workerd. */
export declare function runtimeCommand(name: Runtime): string;
/** The version of runtime `name` installed here (its package's: node22 → 22.23.1), or null. */
export declare function runtimeVersion(name: Runtime): string | null;
/** The folder where the native part of npm package `pkg` at `version`, built for Node.js runtime `name`, is kept between runs (in the user's cache folder); an error where `name` is not installed. */
export declare function nativeCacheDir(name: NodeRuntime, pkg: string, version: string): string;
/** The native part `file` of the package at `packageDir` built for Node.js runtime `name`: kept in nativeCacheDir, compiled there once by `npm rebuild` when missing (told first to `building`, with the file's path); an error where `name` is not installed or the build fails. */
export declare function nativeBuild(
  name: NodeRuntime,
  packageDir: string,
  file: string,
  building?: (path: string) => void,
): string;
/** runtimeBin for a test that needs the runtime: where it is missing, a loud skip notice for `what` (null), or under CI=true an error. */
export declare function requireRuntime(name: Runtime, what: string): string | null;
/** Whether a process of group `pgid` still runs, zombies not counted (where /proc tells them). */
export declare function groupRunning(pgid: number): boolean;
