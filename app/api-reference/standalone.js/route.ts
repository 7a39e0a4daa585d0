// The reference UI's browser bundle, from the pinned @scalar/api-reference package in node_modules
// (no copy in the repository, no CDN). Streamed from disk, cached by browsers for a day.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";

function bundleFile(): string {
  // Resolved by Node at run time, out of the bundler's sight (it would rewrite require.resolve).
  const { createRequire } = process.getBuiltinModule("node:module");
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference");
  return path.join(path.dirname(entry), "browser", "standalone.js");
}

export async function GET(): Promise<Response> {
  const file = bundleFile();
  const { size } = await stat(file);
  return new Response(Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>, {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "content-length": String(size),
      "cache-control": "public, max-age=86400",
      "x-content-type-options": "nosniff",
    },
  });
}
