// The dashboard's procedures for channel connections (no openapi meta: never on /api/v1).
// Members read; owners and admins connect, change and disconnect. Credentials never leave.
import { z } from "zod";
import { router } from "../trpc";
import { actorOf } from "../auth/principal";
import { managerProcedure, memberProcedure } from "../dashboard/procedures";
import {
  channelConnectionListSchema, channelConnectionSchema, connectChannelInput, connectionIdInput,
  listChannelConnectionsInput, updateChannelConnectionInput,
} from "./channels.types";
import { connectChannel, disconnectChannel, listChannelConnections, updateChannelConnection } from "./channel-connections";

export const channelsRouter = router({
  list: memberProcedure
    .input(listChannelConnectionsInput)
    .output(channelConnectionListSchema)
    .query(({ ctx, input }) => listChannelConnections(ctx.db, input)),
  connect: managerProcedure
    .input(connectChannelInput)
    .output(channelConnectionSchema)
    .mutation(({ ctx, input }) => connectChannel(ctx.db, ctx.tenantId, input, actorOf(ctx.principal))),
  update: managerProcedure
    .input(updateChannelConnectionInput)
    .output(channelConnectionSchema)
    .mutation(({ ctx, input }) => updateChannelConnection(ctx.db, ctx.tenantId, input, actorOf(ctx.principal))),
  disconnect: managerProcedure
    .input(connectionIdInput)
    .output(z.object({ deleted: z.boolean() }))
    .mutation(({ ctx, input }) => disconnectChannel(ctx.db, input.id, actorOf(ctx.principal))),
});
