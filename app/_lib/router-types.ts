// The dashboard's wire types, inferred from the router the server runs (as create-t3-app does):
// a page names `RouterOutputs["webhooks"]["getSubscription"]` instead of re-declaring the shape,
// so a field added to or dropped from an output schema reaches every page, or fails `tsc`.
import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "@/server/http/router";

export type RouterOutputs = inferRouterOutputs<AppRouter>;
