import { z } from "zod";
import { router, tenantProcedure } from "../trpc/trpc";
import { actorOf } from "../auth/principal";
import { managerProcedure, memberProcedure } from "../trpc/procedures";
import {
  createRecordInput,
  crmConnectionSchema,
  crmConnectionTestSchema,
  crmRecordSchema,
  setCrmConnectionInput,
  testCrmConnectionInput,
  updateCrmMappingInput,
} from "./crm.types";
import { createCrmRecord } from "./crm.service";
import { deleteCrmConnection, getCrmConnection, setCrmConnection, updateCrmMapping } from "./crm-connection";
import { testCrmConnection } from "./crm-test-connection";

const TAGS = ["CRM"];

const CREATE_DESCRIPTION = `Writes one record into the tenant's connected CRM. Each canonical key in \`fields\` is translated through the connection's field mapping (a key without a mapping is a 400 naming it); the answer carries the fields under the CRM's keys.

No CRM connection: 409. The CRM failing (error status, timeout, unreachable, unreadable answer): 500 \`internal_error\` naming the provider.

\`idempotency_key\` is forwarded so a retry does not create a second record: as the \`Idempotency-Key\` header by the \`http\` provider; with HubSpot (which has no such header) as an upsert keyed by the unique-value property mapped for the canonical key \`idempotency_key\` (a 400 when that mapping is missing).`;

export const crmRouter = router({
  createRecord: tenantProcedure("crm:write")
    .meta({
      openapi: {
        method: "POST",
        path: "/crm/create-record",
        tags: TAGS,
        summary: "Create a record in the tenant's CRM",
        description: CREATE_DESCRIPTION,
        protect: true,
        errorResponses: [409],
      },
      successStatus: 201,
    })
    .input(createRecordInput)
    .output(crmRecordSchema)
    .mutation(({ ctx, input }) => createCrmRecord(ctx.db, input, { tenantId: ctx.tenantId })),

  // Dashboard only (no openapi meta): members read, owners and admins change; credentials never leave.
  connection: memberProcedure.output(crmConnectionSchema.nullable()).query(({ ctx }) => getCrmConnection(ctx.db)),
  setConnection: managerProcedure
    .input(setCrmConnectionInput)
    .output(crmConnectionSchema)
    .mutation(({ ctx, input }) => setCrmConnection(ctx.db, input, actorOf(ctx.principal))),
  updateMapping: managerProcedure
    .input(updateCrmMappingInput)
    .output(crmConnectionSchema)
    .mutation(({ ctx, input }) => updateCrmMapping(ctx.db, input.field_mapping, actorOf(ctx.principal))),
  /**
   * One harmless authenticated read (owners and admins: it spends the credentials): with the stored
   * connection, or with the form's unsaved provider, base URL and token, checked as saving checks them.
   */
  testConnection: managerProcedure
    .input(testCrmConnectionInput)
    .output(crmConnectionTestSchema)
    .mutation(({ ctx, input }) => testCrmConnection(ctx.db, input)),
  deleteConnection: managerProcedure.output(z.object({ deleted: z.boolean() })).mutation(({ ctx }) => deleteCrmConnection(ctx.db, actorOf(ctx.principal))),
});
