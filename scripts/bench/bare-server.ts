// Bench baseline (4), issue 2's "bare route handler": the same JSON page from memory, answered the
// way the lean front answers /api/v1 (server/http/node-rest.ts: the request read as a RestRequest,
// the answer written in one go). Env: PORT, BENCH_BODY_FILE (the page, captured from the full stack).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { RestAnswer, RestRequest } from "../../server/http/rest-bridge";
import { sendRestAnswer, toRestRequest } from "../../server/http/node-rest";

const body = readFileSync(process.env.BENCH_BODY_FILE!, "utf8");
const bareHandler = async (_req: RestRequest): Promise<RestAnswer> => ({
  status: 200,
  headers: { "content-type": "application/json" },
  body,
  route: "/api/v1/offerings",
});

createServer((req, res) => {
  void bareHandler(toRestRequest(req)).then((answer) => sendRestAnswer(res, answer));
}).listen(Number(process.env.PORT), "127.0.0.1");
