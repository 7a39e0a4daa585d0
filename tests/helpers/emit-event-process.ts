// Writes one `csat.received` event for TENANT_ID from a process of its own (against DATABASE_URL),
// so that only PostgreSQL's NOTIFY can tell a worker in another process about its delivery.
import { openDatabase, closeDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { emitEvent } from "../../server/events/emit-any-event";

const db = scopeToTenant((await openDatabase()).prisma, process.env.TENANT_ID!);
await db.$transaction((tx) =>
  emitEvent(tx, "csat.received", {
    object: { id: crypto.randomUUID(), conversation_id: crypto.randomUUID(), score: 5, comment: null, created_at: new Date().toISOString() },
  }),
);
await closeDatabase();
