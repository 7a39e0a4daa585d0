// Calls the assistant's tools as the agent transports do: a request with an API key, answered with
// a status, the error envelope or the tool's result, and the response headers.
import { createCallerFactory, type RequestContext } from "../../server/trpc/trpc";
import { requestLogger } from "../../server/lib/log";
import { agentRouter } from "../../server/tools/tools.router";
import { errorBody, toAppError } from "../../server/lib/errors";
import { openDatabase } from "../../server/db/database";

export type ToolAnswer = { status: number; body: any; text: string; headers: Headers };

const createCaller = createCallerFactory(agentRouter);

export async function callTool(key: string | null, tool: string, input: unknown): Promise<ToolAnswer> {
  const headers = new Headers(key ? { authorization: `Bearer ${key}` } : {});
  const resHeaders = new Headers();
  const ctx: RequestContext = { transport: "rest", headers, requestId: "test", logger: requestLogger("test"), resHeaders, response: {} };
  await openDatabase(); // as the server process does before it serves
  const caller = createCaller(ctx) as unknown as Record<string, (input: unknown) => Promise<unknown>>;
  try {
    const body = await caller[tool](input);
    return { status: 200, body, text: JSON.stringify(body), headers: resHeaders };
  } catch (err) {
    const error = toAppError(err);
    for (const [name, value] of Object.entries(error.headers ?? {})) resHeaders.set(name, value);
    const body = errorBody(error);
    return { status: error.status, body, text: JSON.stringify(body), headers: resHeaders };
  }
}
