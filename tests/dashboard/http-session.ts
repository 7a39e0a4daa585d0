// A dashboard browser's requests over real HTTP against a running mount: sign in through
// better-auth's /api/auth, then call /api/trpc and /api/auth/* with the session cookie, from the
// mount's own origin (what a browser on the dashboard sends).
import { PASSWORD } from "../helpers/dashboard";

export type HttpAnswer = { status: number; body: any; text: string };

/** Settings for a mount these tests sign in to: several sign-ins from 127.0.0.1 within a minute. */
export const SIGN_IN_ENV = { AUTH_SIGNIN_RATE_MAX: "1000" };

/** A response read as text and, when it is JSON, parsed. */
export async function answerOf(res: Response): Promise<HttpAnswer> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

/** Signs in over HTTP and returns the Cookie header value of the new session. */
export async function signInOverHttp(baseUrl: string, email: string, password = PASSWORD): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

/** One tRPC call (not batched) as the dashboard's client sends it. */
export async function trpcOverHttp(baseUrl: string, cookie: string, kind: "query" | "mutation", path: string, input?: unknown): Promise<HttpAnswer> {
  const headers = { cookie, origin: baseUrl };
  if (kind === "query") {
    const qs = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    return answerOf(await fetch(`${baseUrl}/api/trpc/${path}${qs}`, { headers }));
  }
  return answerOf(
    await fetch(`${baseUrl}/api/trpc/${path}`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(input ?? null),
    }),
  );
}

/** A request to one of better-auth's endpoints under /api/auth (a POST with a JSON body, or a GET). */
export async function authOverHttp(baseUrl: string, cookie: string, path: string, body?: unknown): Promise<HttpAnswer> {
  const init: RequestInit =
    body === undefined
      ? { headers: { cookie, origin: baseUrl } }
      : { method: "POST", headers: { cookie, origin: baseUrl, "content-type": "application/json" }, body: JSON.stringify(body) };
  return answerOf(await fetch(`${baseUrl}/api/auth${path}`, init));
}

/** What a refused tRPC call carries: the app's error code and HTTP status. */
export const trpcErrorOf = (answer: HttpAnswer) => ({
  status: answer.status,
  code: answer.body?.error?.data?.appCode,
  message: answer.body?.error?.message,
});
