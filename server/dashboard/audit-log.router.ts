// The audit log's dashboard procedures (nested under dashboard.auditLog): every member reads it.
import { z } from "zod";
import { router } from "../trpc/trpc";
import { memberProcedure } from "../trpc/procedures";
import { auditCsvSchema, auditLogExportInput, auditLogListInput } from "../audit/audit-log.types";
import { exportAuditCsv, listAuditActions, listAuditEntries } from "../audit/audit-log";

export const auditLogRouter = router({
  list: memberProcedure.input(auditLogListInput).query(({ ctx, input }) => listAuditEntries(ctx.db, input)),
  actions: memberProcedure.output(z.array(z.string())).query(({ ctx }) => listAuditActions(ctx.db)),
  /** A query (it changes nothing); the page turns the text into a download. */
  exportCsv: memberProcedure
    .input(auditLogExportInput)
    .output(auditCsvSchema)
    .query(({ ctx, input }) => exportAuditCsv(ctx.db, input)),
});
