// The REST contract served straight from node:http: the lean front's /api/v1 requests go to
// `answerRestRequest` without a Fetch Request/Response per request (that conversion cost about a
// tenth of the front's CPU per request). Everything that makes an answer correct stays in the bridge.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { answerRestRequest, type RestAnswer, type RestRequest } from "./rest-bridge";
import type { HeaderReader } from "../trpc/trpc";
import { observeHttpRequest } from "../observability/metrics";
import { bodyOfNodeRequest } from "../lib/request-body";

/**
 * Headers as Next hands them to its route handlers: node's parsed headers (a repeated header's
 * values joined by ", ", except those HTTP allows once, such as Authorization, where the first
 * wins), so both mounts read a request alike.
 */
function nodeHeaderReader(headers: IncomingHttpHeaders): HeaderReader {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

export function toRestRequest(req: IncomingMessage): RestRequest {
  const method = req.method ?? "GET";
  return {
    method,
    target: req.url ?? "/",
    headers: nodeHeaderReader(req.headers),
    // Read whole, through the request's events (one promise per body); over the limit the rest is
    // drained rather than the request destroyed, which would drop the connection before the 413.
    body: method === "GET" || method === "HEAD" ? null : bodyOfNodeRequest(req),
    // The client's address is resolved from it (and X-Forwarded-For only when it is a trusted proxy).
    remoteAddress: req.socket.remoteAddress ?? null,
  };
}

/** Writes a complete answer in one go, with its length (added to its headers: an answer's are its own, made for it). */
export function sendRestAnswer(res: ServerResponse, answer: Pick<RestAnswer, "status" | "headers" | "body">): void {
  answer.headers["content-length"] = String(Buffer.byteLength(answer.body));
  res.writeHead(answer.status, answer.headers).end(answer.body);
}

/** A REST bridge's `answer` mounted on node:http, each request timed by its route template (the HTTP metrics). */
export function answerFromNodeWith(answer: (req: RestRequest) => Promise<RestAnswer>) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = performance.now();
    const answered = await answer(toRestRequest(req));
    // A bridge's answer headers are built per request: its length joins them without a copy.
    answered.headers["content-length"] = String(Buffer.byteLength(answered.body));
    res.writeHead(answered.status, answered.headers).end(answered.body);
    observeHttpRequest(answered.route, req.method, answered.status, startedAt);
  };
}

/** Answers one /api/v1 request from node:http. */
export const answerRestFromNode = answerFromNodeWith(answerRestRequest);
