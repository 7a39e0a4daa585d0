// What a tool is: one declaration per tool (name, a description an LLM reads, its zod input and
// output, the scope it needs, an example call, and a handler that adapts the input to a domain
// service). The router, the catalog and the MCP server are all built from these declarations.
import { z } from "zod";
import type { Scope } from "../auth/principal";
import type { TenantDb, TenantSql } from "../db/tenant-scope";
import { MAX_TOOL_CALL_ID } from "./tool-calls";

export type ToolContext = {
  db: TenantDb;
  sql: TenantSql;
  tenantId: string;
  /** The runtime's `tool_call_id`: given only to a tool that `recordsItsCall`. */
  toolCallId?: string;
  /**
   * The caller's API key, remembered by this process and not looked up for this call: a tool that
   * `confirmsCallerKey` must confirm it in its write (`keyIsCurrentSql`, else `StaleKeyError`). Null: looked up.
   */
  keyToConfirm: string | null;
};

export type ToolDeclaration<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> = {
  /** snake_case, as the model calls it */
  name: string;
  /** A short human title (MCP `title`, the docs) */
  title: string;
  /** What the tool does and when to use it, written for the model */
  description: string;
  /**
   * `read` tools need `assistant:read` (or `read`); a `write` tool needs `scope`, the write scope
   * of the matching /api/v1 operation, and also accepts `tool_call_id`.
   */
  kind: "read" | "write";
  scope: Scope;
  input: I;
  output: O;
  /** A valid call (without `tool_call_id`): documentation, and checked against the schema by tests. */
  example: z.input<I>;
  run(ctx: ToolContext, input: z.output<I>): Promise<z.output<O>>;
  /**
   * The tool keeps the tool-call record itself, in the statement that makes its change (same rules
   * as withToolCall in tool-calls.ts: one change per id, a repeat answers the first result). Without
   * it, withToolCall wraps `run` in a transaction of its own.
   */
  recordsItsCall?: true;
  /**
   * The tool's one write statement confirms the caller's key (ToolContext's `keyToConfirm`), so the
   * key is not looked up first when this process knows it: one round trip for the whole call.
   */
  confirmsCallerKey?: true;
};

export const defineTool = <I extends z.ZodObject, O extends z.ZodType>(tool: ToolDeclaration<I, O>) => tool;

const toolCallIdField = z
  .string()
  .min(1)
  .max(MAX_TOOL_CALL_ID)
  .describe(
    `Your runtime's id for this call (at most ${MAX_TOOL_CALL_ID} characters). A retry with the same id answers the first call's result and changes nothing more.`,
  );

/** The input a caller sends: a write tool's input also takes an optional `tool_call_id`. */
export function toolInputSchema(tool: ToolDeclaration): z.ZodObject {
  return tool.kind === "write" ? tool.input.extend({ tool_call_id: toolCallIdField.optional() }) : tool.input;
}

/** The scope a caller's key needs (`assistant:read` is also granted by `read`). */
export const requiredScope = (tool: ToolDeclaration): Scope => (tool.kind === "read" ? "assistant:read" : tool.scope);
