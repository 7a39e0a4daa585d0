import { router, tenantProcedure } from "../trpc/trpc";
import { callListSchema, listCallsInput } from "./calls.types";
import { listCalls } from "./calls.service";

export const callsRouter = router({
  list: tenantProcedure("read")
    .meta({
      openapi: {
        method: "GET",
        path: "/conversations/{id}/calls",
        tags: ["Conversations"],
        summary: "List a conversation's calls",
        description:
          "Newest first (started_at, then id, descending). Calls are reported by the connected voice providers; each call's transcript turns are the conversation's messages.",
        protect: true,
      },
    })
    .input(listCallsInput)
    .output(callListSchema)
    .query(({ ctx, input }) => listCalls(ctx.db, input)),
});
