/** dist/server/main.mjs: the compiled production server. */
export const SERVER_BUNDLE: string;
/** Compiles server/http/main.ts (and what it imports) into dist/server/. */
export function buildServer(): Promise<void>;
