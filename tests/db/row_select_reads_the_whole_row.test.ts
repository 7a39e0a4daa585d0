// rowSelect: one raw statement answers a whole Prisma row (ingest's conversation), its select list
// taken from the model's scalar fields, its dates checked for completeness by the type system.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { rowSelect } from "../../server/db/row-select";
import { Prisma } from "../../server/db/generated/client";
import { conversationRow, type ConversationRow } from "../../server/conversations/conversations.service";
import { tenantWithKey } from "../helpers/api";
import { makeConversation } from "../helpers/conversations";

describe("rowSelect", () => {
  it("the_raw_row_equals_what_prisma_reads", async () => {
    const { tenantId } = await tenantWithKey();
    const { id } = await makeConversation(tenantId);
    const sql = (await openDatabase()).writes;
    const [text] = await sql<Record<string, unknown>>({ text: `SELECT ${conversationRow.select("c")} FROM conversations c WHERE c.id = $1` }, [id]);
    const viaPrisma = await (await openDatabase()).prisma.conversation.findUniqueOrThrow({ where: { id } });
    expect(conversationRow.parse(text!)).toEqual(viaPrisma);
  });

  it("a_date_field_left_out_or_a_non_date_listed_does_not_compile", () => {
    // @ts-expect-error updatedAt (a Date field) is missing
    rowSelect<ConversationRow>(Prisma.ConversationScalarFieldEnum, {
      lastMessageAt: true,
      lastActivityAt: true,
      closedAt: true,
      handoffStartedAt: true,
      slaBreachedAt: true,
      createdAt: true,
    });
    rowSelect<ConversationRow>(Prisma.ConversationScalarFieldEnum, {
      lastMessageAt: true,
      lastActivityAt: true,
      closedAt: true,
      handoffStartedAt: true,
      slaBreachedAt: true,
      createdAt: true,
      updatedAt: true,
      // @ts-expect-error status is not a Date field
      status: true,
    });
    expect(conversationRow.select("c")).toContain('c.tenant_id AS "tenantId"');
  });
});
