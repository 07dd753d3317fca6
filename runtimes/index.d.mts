export type Runtime = 'node22' | 'node24' | 'bun' | 'deno' | 'workerd';
export declare const RUNTIMES: Runtime[];
/** The package folder of runtime `name` (a Node.js one holds its headers under include/), or null where it is not installed. */
export declare function runtimeHome(name: Runtime): string | null;
/** The folder holding runtime `name`'s command (`node`, `bun`, `deno` or `workerd`), to put first on a PATH; null where this machine does not have it. */
export declare function runtimeBin(name: Runtime): string | null;
