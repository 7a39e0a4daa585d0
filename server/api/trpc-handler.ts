// The dashboard's tRPC endpoint as a plain `(Request) => Promise<Response>`.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../router";
import type { DashboardIdentity } from "../trpc";
import { log } from "../log";
import { isTrustedOrigin } from "../dashboard/request-origin";

export const TRPC_ENDPOINT = "/api/trpc";

/** Set by the dashboard's auth module: resolves the signed-in user of a request. */
let identityResolver: ((headers: Headers) => Promise<DashboardIdentity | null>) | undefined;
export const setDashboardIdentityResolver = (fn: typeof identityResolver) => {
  identityResolver = fn;
};

export function handleTrpcRequest(req: Request): Promise<Response> {
  const requestId = randomUUID();
  const resHeaders = new Headers({ "x-request-id": requestId });
  // Session cookies ride along on cross-site requests: a mutation must come from a trusted origin.
  if (req.method !== "GET" && req.method !== "HEAD" && !isTrustedOrigin(req.headers)) {
    return Promise.resolve(Response.json(
      { error: { code: "forbidden", message: "untrusted origin" } },
      { status: 403, headers: resHeaders },
    ));
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req,
    router: appRouter,
    createContext: () => ({
      transport: "trpc" as const,
      headers: req.headers,
      requestId,
      resHeaders,
      response: {},
      dashboardIdentity: () => (identityResolver ? identityResolver(req.headers) : Promise.resolve(null)),
    }),
    responseMeta: () => ({ headers: resHeaders }),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") log.error("trpc error", { requestId, path, error: error.cause?.stack ?? error.stack });
    },
  });
}
