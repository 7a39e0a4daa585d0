// node:http <-> Fetch conversion for the lean front's Fetch handlers (tRPC, Inngest). Bodies stream
// in both directions (the request body is read by the handler straight from the socket; the
// response body is written chunk by chunk with backpressure), so nothing is buffered twice.
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The request body as a web stream that reads from the socket only when the handler reads. A body
 * the handler never reads (a 413 decided from content-length) is then drained by node:http as
 * usual, and one it stops reading is drained on cancel, so the connection can carry the next
 * request. (`Readable.toWeb` starts reading at once, which leaves an unread body stuck in the
 * socket and the keep-alive connection hanging.)
 */
function lazyBodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        return new Promise<void>((resolve, reject) => {
          const done = () => {
            req.off("readable", tryRead).off("end", onEnd).off("error", onError);
            resolve();
          };
          const onEnd = () => {
            controller.close();
            done();
          };
          const onError = (err: Error) => {
            req.off("readable", tryRead).off("end", onEnd).off("error", onError);
            reject(err);
          };
          function tryRead() {
            const chunk: Buffer | null = req.read();
            if (chunk !== null) {
              controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
              done();
            } else if (req.readableEnded) onEnd();
          }
          req.on("readable", tryRead).on("end", onEnd).on("error", onError);
          tryRead();
        });
      },
      cancel() {
        req.resume();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A Fetch Request over a node request. `origin` is used when the client sent no Host header. Its
 * signal fires when the client goes away (long polls, streams).
 */
export function toFetchRequest(req: IncomingMessage, res: ServerResponse, origin: string): Request {
  // From node's parsed headers, as Next builds its route handlers' requests (see node-rest.ts).
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // HTTP/2 pseudo-headers (":path") are not valid Fetch header names.
    if (value === undefined || name.charCodeAt(0) === 58) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const host = req.headers.host;
  const url = host ? `http://${host}${req.url ?? "/"}` : `${origin}${req.url ?? "/"}`;
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });

  return new Request(url, {
    method,
    headers,
    signal: abort.signal,
    ...(hasBody ? { body: lazyBodyStream(req), duplex: "half" } : {}),
  } as RequestInit);
}

const PENDING = Symbol("pending");

/**
 * Writes a Fetch Response to a node response, streaming its body. A body that is complete at once
 * (the usual JSON answer) goes out with a content-length in one write instead of chunked encoding;
 * a body still being produced is streamed chunk by chunk as it arrives.
 */
export async function sendFetchResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie") headers[name] = value;
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  const statusText = response.statusText || undefined;

  if (!response.body) {
    res.writeHead(response.status, statusText, headers).end();
    return;
  }
  const reader = response.body.getReader();
  const cancel = () => void reader.cancel().catch(() => {});
  res.once("close", cancel);
  try {
    const first = await reader.read();
    const secondRead = first.done ? null : reader.read();
    const second = secondRead ? await Promise.race([secondRead, new Promise<typeof PENDING>((r) => setImmediate(r, PENDING))]) : first;
    if (second !== PENDING && second.done) {
      const body = first.done ? undefined : first.value;
      const mayHaveBody = response.status !== 204 && response.status !== 304 && response.status >= 200;
      if (mayHaveBody && !("content-length" in headers)) headers["content-length"] = String(body?.byteLength ?? 0);
      res.writeHead(response.status, statusText, headers).end(body);
      return;
    }
    res.writeHead(response.status, statusText, headers);
    res.write(first.value);
    let next = second === PENDING ? await secondRead! : second;
    for (;;) {
      if (next.done) break;
      if (res.destroyed) return;
      if (!res.write(next.value)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
      next = await reader.read();
    }
    res.end();
  } finally {
    res.off("close", cancel);
  }
}
