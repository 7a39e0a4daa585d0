// Bench baseline (4), issue 2's "bare route handler": a `(Request) => Response` returning the same
// JSON page from memory, mounted exactly like the lean front mounts the API (node:http with the
// same node <-> Fetch conversion). Env: PORT, BENCH_BODY_FILE (the page, captured from the full stack).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { sendFetchResponse, toFetchRequest } from "../../server/http/fetch-bridge";

const body = readFileSync(process.env.BENCH_BODY_FILE!, "utf8");
const origin = `http://127.0.0.1:${process.env.PORT}`;
const bareHandler = async (_req: Request) => new Response(body, { status: 200, headers: { "content-type": "application/json" } });

createServer((req, res) => {
  void bareHandler(toFetchRequest(req, res, origin, false)).then((response) => sendFetchResponse(res, response));
}).listen(Number(process.env.PORT), "127.0.0.1");
