// Helpers for the conversation and lead tests: unique valid phone numbers, rows made through the
// services, and the tenant's events read through the tenant-scoped client.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { openDatabase } from "../../server/db/database";
import { scopeToTenant } from "../../server/db/tenant-scope";
import { createConversation } from "../../server/conversations/conversations.service";
import type { Channel } from "../../server/lib/conversation-channels";

let phoneCounter = 0;
/** A valid UAE mobile number in E.164, unique within the test process. */
export function uniquePhone(): string {
  const n = (process.pid * 1000 + ++phoneCounter) % 10_000_000;
  return `+97150${String(n).padStart(7, "0")}`;
}

export async function tenantDb(tenantId: string) {
  return scopeToTenant((await openDatabase()).prisma, tenantId);
}

export async function makeConversation(
  tenantId: string,
  channel: Channel = "sms",
  identifier = channel === "email" ? `c${++phoneCounter}@example.com` : channel === "webchat" ? `visitor-${++phoneCounter}` : uniquePhone(),
) {
  const { conversation } = await createConversation(await tenantDb(tenantId), { channel, customer_identifier: identifier });
  return conversation;
}

/** The tenant's stored events of one type, oldest first. */
export async function eventsOf(tenantId: string, type?: string) {
  const db = await tenantDb(tenantId);
  const rows = await db.event.findMany({ where: type ? { type } : {}, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows.map((r) => ({ type: r.type, data: r.data as any }));
}

export type RecordedRequest = { method: string; url: string; headers: IncomingMessage["headers"]; body: string };

/** A fake provider on 127.0.0.1 that records every request and answers with `respond`. */
export async function startFakeServer(respond: (req: RecordedRequest, res: ServerResponse) => void) {
  const received: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(recorded);
      respond(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
