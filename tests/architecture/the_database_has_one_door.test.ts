// One door to the database (server/db/database.ts): raw SQL is a typed statement the door runs
// (`database().hot/writes/planned/generic`, or `queryOn(tx, …)` in a Prisma transaction), never a
// string handed to Prisma's `$queryRawUnsafe`/`$executeRawUnsafe` elsewhere; and no driver is
// imported outside server/db, where the door says why each of the two is there.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { SERVER, sourceFiles } from "./server-imports";

const DOOR = "db/database.ts";
const RAW_CALL = /\$(queryRawUnsafe|executeRawUnsafe)\s*[<(]/g;
const DRIVER_IMPORT = /from "(pg|postgres|@electric-sql\/pglite|@prisma\/adapter-pg|pglite-prisma-adapter)"/g;

/** Each raw Prisma call (outside comments) in `text`: `file:line`. */
function rawCalls(file: string, text: string): string[] {
  return text.split("\n").flatMap((line, i) => (/^\s*(\/\/|\*|\/\*)/.test(line) || !line.match(RAW_CALL) ? [] : [`${file}:${i + 1}`]));
}

describe("the database's door", () => {
  test("no_server_file_but_the_door_hands_prisma_a_raw_string", () => {
    const found = sourceFiles()
      .map((file) => path.relative(SERVER, file))
      .filter((file) => file !== DOOR)
      .flatMap((file) => rawCalls(file, readFileSync(path.join(SERVER, file), "utf8")));
    expect(found).toEqual([]);
  });

  test("database_drivers_are_imported_only_in_server_db", () => {
    const found = sourceFiles()
      .map((file) => path.relative(SERVER, file))
      .filter((file) => !file.startsWith("db/"))
      .flatMap((file) => [...readFileSync(path.join(SERVER, file), "utf8").matchAll(DRIVER_IMPORT)].map((m) => `${file} ${m[1]}`));
    expect(found).toEqual([]);
  });

  test("the_scan_finds_a_raw_call_and_skips_comments", () => {
    const text = [
      "await tx.$queryRawUnsafe<{ id: string }[]>(SQL, id);",
      "// Prisma's $queryRawUnsafe(text) is a statement",
      "db.$executeRawUnsafe(`NOTIFY x`)",
    ].join("\n");
    expect(rawCalls("x.ts", text)).toEqual(["x.ts:1", "x.ts:3"]);
  });
});
