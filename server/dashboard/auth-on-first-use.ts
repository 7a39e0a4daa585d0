// better-auth (about 20 MB of code) is loaded at the first dashboard request that needs it, so a
// process that only serves the API never loads it. Import getAuth from here, not from ./auth.
import type { Auth } from "./auth";

export async function getAuth(): Promise<Auth> {
  return (await import("./auth")).getAuth();
}
