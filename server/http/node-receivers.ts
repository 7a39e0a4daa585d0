// The receivers (server/receivers) served straight from node:http, for the lean front: no Fetch
// Request or Response per request (that conversion was a fifth of the receiver's CPU), the same
// `answerWebhook` the Next route file reaches through its Fetch handler, so both answer alike.
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerWebhook, receiverRouteOf } from "../receivers";
import { metricsEnabled, observeHttpRequest } from "../observability/metrics";
import { jsonAnswer, malformed } from "../receivers/receiver-http";
import { errorBody } from "../lib/errors";
import { sendRestAnswer, toRestRequest } from "./node-rest";

/**
 * A node:http handler of /api/webhooks. The URL is the one a Fetch Request would carry (the Host the
 * client called, or `origin` when it sent none), the headers node's parsed ones, the body read
 * from the socket only when a receiver reads it, the client address the socket's.
 */
export function answerWebhookFromNode(origin: string): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const startedAt = performance.now();
    const request = toRestRequest(req);
    const host = req.headers.host;
    let url: URL;
    try {
      url = new URL(host ? `http://${host}${request.target}` : `${origin}${request.target}`);
    } catch {
      sendRestAnswer(res, jsonAnswer(400, errorBody(malformed("malformed Host header", "host"))));
      return;
    }
    const answer = await answerWebhook({ method: request.method, url, headers: request.headers, body: request.body, remoteAddress: request.remoteAddress });
    sendRestAnswer(res, answer);
    if (metricsEnabled()) observeHttpRequest(receiverRouteOf(url.pathname), req.method, answer.status, startedAt);
  };
}
