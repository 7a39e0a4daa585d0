// Lets @upstash/ratelimit 2.2 (written for Upstash's REST client) run on a stock Redis via ioredis.
// The library only calls `evalsha(sha, keys, args)` and, when that fails with NOSCRIPT,
// `eval(script, keys, args)` (plus `get`/`set` for dynamic limits, which we do not enable).
// Its scripts begin with `#!lua flags=allow-key-locking`, a flag stock Redis rejects, so the
// adapter strips that first line, remembers library-sha -> stripped script, and answers NOSCRIPT
// for a sha it has not seen so the library sends the script text once.
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";

const SHEBANG = /^#!lua[^\n]*\n/;

export const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

export const stripShebang = (script: string) => script.replace(SHEBANG, "");

type Arg = string | number | null | undefined;
const toArgs = (keys: string[], args: Arg[]): (string | number)[] => [...keys, ...args.map((a) => (a == null ? "" : a))];

export interface ScriptAdapter {
  evalsha(sha: string, keys: string[], args: Arg[]): Promise<unknown>;
  eval(script: string, keys: string[], args: Arg[]): Promise<unknown>;
  get(key: string): Promise<string | null>;
  set(key: string, value: string | number): Promise<unknown>;
  /** Library sha -> the script text the library sent (before stripping); for pin-detection tests. */
  readonly scripts: ReadonlyMap<string, string>;
}

export function createScriptAdapter(client: Redis): ScriptAdapter {
  const scripts = new Map<string, string>();
  const stripped = new Map<string, { body: string; sha: string }>();
  return {
    scripts,
    async evalsha(sha, keys, args) {
      const known = stripped.get(sha);
      if (!known) throw new Error(`NOSCRIPT ${sha} not yet seen by the ioredis adapter`);
      // After a Redis restart the server answers NOSCRIPT itself and the library falls back to eval.
      return client.evalsha(known.sha, keys.length, ...toArgs(keys, args));
    },
    async eval(script, keys, args) {
      const body = stripShebang(script);
      const sha = sha1(script);
      scripts.set(sha, script);
      stripped.set(sha, { body, sha: sha1(body) });
      return client.eval(body, keys.length, ...toArgs(keys, args));
    },
    get: (key) => client.get(key),
    set: (key, value) => client.set(key, value),
  };
}
