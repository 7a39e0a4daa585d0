// The dashboard's procedures for channel connections (no openapi meta: never on /api/v1).
// Members read; owners and admins connect, change and disconnect. Credentials never leave.
import { z } from "zod";
import { router } from "../trpc/trpc";
import { actorOf } from "../auth/principal";
import { managerProcedure, memberProcedure } from "../trpc/procedures";
import {
  channelConnectionListSchema,
  channelConnectionSchema,
  connectChannelInput,
  connectionIdInput,
  listChannelConnectionsInput,
  updateChannelConnectionInput,
} from "./channels.types";
import { connectChannel, disconnectChannel, listChannelConnections, updateChannelConnection } from "./channel-connections";
import { publicBaseUrl } from "./receiver-settings";

export const channelsRouter = router({
  /** Where providers reach this deployment (PUBLIC_BASE_URL), to show each connection's receiver URL; null when unset. */
  receiverBaseUrl: memberProcedure.output(z.object({ public_base_url: z.string().nullable() })).query(() => ({ public_base_url: publicBaseUrl() })),
  list: memberProcedure
    .input(listChannelConnectionsInput)
    .output(channelConnectionListSchema)
    .query(({ ctx, input }) => listChannelConnections(ctx.db, input)),
  connect: managerProcedure
    .input(connectChannelInput)
    .output(channelConnectionSchema)
    .mutation(({ ctx, input }) => connectChannel(ctx.db, input, actorOf(ctx.principal))),
  update: managerProcedure
    .input(updateChannelConnectionInput)
    .output(channelConnectionSchema)
    .mutation(({ ctx, input }) => updateChannelConnection(ctx.db, input, actorOf(ctx.principal))),
  disconnect: managerProcedure
    .input(connectionIdInput)
    .output(z.object({ deleted: z.boolean() }))
    .mutation(({ ctx, input }) => disconnectChannel(ctx.db, input.id, actorOf(ctx.principal))),
});
