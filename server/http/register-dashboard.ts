// Imported once by the /api/trpc route: lets tenant procedures resolve the signed-in user.
import { setDashboardIdentityResolver } from "./trpc-handler";
import type { DashboardIdentity } from "../trpc/trpc";
import { resolveDashboardIdentity } from "../dashboard/identity";

// A batched tRPC request runs several procedures over one Headers object: resolve the session once.
const perRequest = new WeakMap<Headers, Promise<DashboardIdentity | null>>();

setDashboardIdentityResolver((headers) => {
  let identity = perRequest.get(headers);
  if (!identity) perRequest.set(headers, (identity = resolveDashboardIdentity(headers)));
  return identity;
});
