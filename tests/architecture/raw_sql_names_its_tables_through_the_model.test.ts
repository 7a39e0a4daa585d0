// Raw SQL names its tables through `TABLE` (server/db/columns.ts), as it names its columns through
// the model: a table written out by hand after FROM, JOIN, INTO, UPDATE or USING is what this finds.
// (server/db/columns.ts checks TABLE itself against the migrated tables: tests/db.)
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { TABLE } from "../../server/db/columns";
import { SERVER, sourceFiles } from "./server-imports";

const TABLES = Object.values(TABLE).join("|");
/** A table named by hand where SQL names one (a comment's or a message's "the messages from …" is not SQL, and is skipped with its line). */
const HAND_WRITTEN = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|USING)\\s+"?(${TABLES})"?(?=\\s|$|[,)\`])`, "g");

/** Each hand-written table name in `text`: `file:line table`. Comment lines are skipped. */
function handWrittenTables(file: string, text: string): string[] {
  return text.split("\n").flatMap((line, i) => {
    if (/^\s*(\/\/|\*|\/\*)/.test(line)) return [];
    return [...line.matchAll(HAND_WRITTEN)].map((m) => `${file}:${i + 1} ${m[1]}`);
  });
}

describe("raw SQL", () => {
  test("names_no_table_by_hand", () => {
    const found = sourceFiles().flatMap((file) => handWrittenTables(path.relative(SERVER, file), readFileSync(file, "utf8")));
    expect(found).toEqual([]);
  });

  test("the_scan_finds_a_table_named_by_hand_and_passes_one_named_through_TABLE", () => {
    const text = [
      "const A = `SELECT id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`;",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text the scan reads
      "const B = `SELECT id FROM ${TABLE.WebhookDelivery} WHERE true`;",
      "// the messages FROM messages in a comment",
      "const C = `UPDATE conversations c SET x = 1`;",
    ].join("\n");
    expect(handWrittenTables("x.ts", text)).toEqual(["x.ts:1 webhook_deliveries", "x.ts:1 events", "x.ts:4 conversations"]);
  });
});
