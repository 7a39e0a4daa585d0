// Request bodies, the same on every surface (REST and the dashboard's tRPC endpoint): JSON only, and
// read with a limit — a declared length over it is refused before a byte is read, and an undeclared
// (chunked) body is counted while it streams, so at most 1 MiB of a request is ever held in memory.
import type { Readable } from "node:stream";
import { AppError, badRequest } from "./errors";

/** `application/json`, with or without parameters (`; charset=utf-8`). */
export function assertJsonContentType(contentType: string | null): void {
  if (/^application\/json\s*(;|$)/i.test(contentType ?? "")) return;
  throw badRequest(`content-type must be application/json (got ${contentType ? `'${contentType.slice(0, 100)}'` : "none"})`);
}

export const MAX_BODY_BYTES = 1024 * 1024;

const bodyTooLarge = () => new AppError("bad_request", "request body exceeds 1 MiB", { status: 413 });

/**
 * A request body as the fronts hand it over: chunk by chunk (a Fetch Request's stream, under Next),
 * or whole (`readUpTo`, the lean front straight from node:http: one promise per body, not one per
 * chunk as an async iterator takes).
 */
export type RequestBody = AsyncIterable<Uint8Array> | WholeBody;
export type WholeBody = {
  /** The body's bytes, or null once it exceeds `limit` (the rest is then discarded unread). */
  readUpTo(limit: number): Promise<Buffer | null>;
};

/**
 * A node:http request's body, read whole through its events. Over the limit, the rest is drained
 * (not destroyed: the connection must stay up for the 413 to be written).
 */
export function bodyOfNodeRequest(req: Readable): WholeBody {
  return {
    readUpTo: (limit) =>
      new Promise<Buffer | null>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          req.off("data", onData);
          req.off("end", onEnd);
          req.off("error", onError);
          req.off("close", onClose);
        };
        const onData = (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) {
            done();
            req.resume();
            resolve(null);
          } else chunks.push(chunk);
        };
        const onEnd = () => {
          done();
          resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
        };
        const onError = (err: Error) => {
          done();
          reject(err);
        };
        const onClose = () => {
          if (req.readableEnded) return;
          done();
          reject(new Error("the request was aborted before its body was complete"));
        };
        if (req.readableEnded) return resolve(Buffer.alloc(0));
        req.on("data", onData);
        req.on("end", onEnd);
        req.on("error", onError);
        req.on("close", onClose);
      }),
  };
}

/** The body's bytes, or null once it exceeds `limit` (leaving an iteration early discards the rest unread). */
export async function readBodyUpTo(body: RequestBody, limit: number): Promise<Buffer | null> {
  if ("readUpTo" in body) return body.readUpTo(limit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The body as UTF-8 text, or a 413 once it is known to exceed 1 MiB. */
export async function readLimitedBody(contentLength: string | null, body: RequestBody | null): Promise<string> {
  if (Number(contentLength ?? "0") > MAX_BODY_BYTES) throw bodyTooLarge();
  if (!body) return "";
  const bytes = await readBodyUpTo(body, MAX_BODY_BYTES);
  if (!bytes) throw bodyTooLarge();
  return bytes.toString("utf8");
}
