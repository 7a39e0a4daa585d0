/** dist/server/main.mjs: the compiled production server. */
export const SERVER_BUNDLE: string;
/** Compiles server/http/main.ts (and what it imports) into dist/server/, then makes dist/embedded-template (a migrated, empty embedded database). */
export function buildServer(): Promise<void>;
