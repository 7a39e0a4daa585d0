// The endpoint URL field's hint, true to this server: whether it takes loopback targets
// (WEBHOOK_ALLOW_LOOPBACK=1, for local testing) comes from the server itself.
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";

export const URL_HINT = "HTTPS to a public address; private and loopback addresses are refused.";
export const URL_HINT_LOOPBACK_ALLOWED =
  "HTTPS to a public address, or http(s) on 127.0.0.1, ::1 or localhost: this server allows loopback targets (WEBHOOK_ALLOW_LOOPBACK=1, for local testing). Private addresses are refused.";

/** Whether this server allows loopback targets (false until it has answered). */
export function useLoopbackAllowed(): boolean {
  const trpc = useTRPC();
  const rules = useQuery({ ...trpc.webhooks.targetRules.queryOptions(), staleTime: Number.POSITIVE_INFINITY });
  return rules.data?.loopback_allowed ?? false;
}

export function useUrlHint(): string {
  return useLoopbackAllowed() ? URL_HINT_LOOPBACK_ALLOWED : URL_HINT;
}
