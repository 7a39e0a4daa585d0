// Request bodies, the same on every surface (REST and the dashboard's tRPC endpoint): JSON only, and
// read with a limit — a declared length over it is refused before a byte is read, and an undeclared
// (chunked) body is counted while it streams, so at most 1 MiB of a request is ever held in memory.
import { AppError, badRequest } from "./errors";

/** `application/json`, with or without parameters (`; charset=utf-8`). */
export function assertJsonContentType(contentType: string | null): void {
  if (/^application\/json\s*(;|$)/i.test(contentType ?? "")) return;
  throw badRequest(`content-type must be application/json (got ${contentType ? `'${contentType.slice(0, 100)}'` : "none"})`);
}

export const MAX_BODY_BYTES = 1024 * 1024;

export const bodyTooLarge = () => new AppError("bad_request", "request body exceeds 1 MiB", { status: 413 });

/** The body as UTF-8 text, or a 413 once it is known to exceed 1 MiB. */
export async function readLimitedBody(contentLength: string | null, body: AsyncIterable<Uint8Array> | null): Promise<string> {
  if (Number(contentLength ?? "0") > MAX_BODY_BYTES) throw bodyTooLarge();
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    // Leaving the loop early ends the iterator: the rest of the body is discarded unread.
    if (size > MAX_BODY_BYTES) throw bodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
