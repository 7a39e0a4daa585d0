// The webhook claim's runner (`database().generic`) keeps the plan a statement got at its first call:
// planning was half of the claim's database CPU, and by default PostgreSQL plans a prepared
// statement again at every call when it guesses its generic plan costlier. Behind a transaction
// pooler no startup parameter reaches PostgreSQL and nothing is prepared (each call planned anew);
// on PGlite the runner is the ordinary one.
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../server/db/database";
import { behindTransactionPooler, databaseKind } from "../../server/db/location";

const SHOW = { text: "SELECT current_setting('plan_cache_mode') AS mode" };

describe("statement runners' plan caching", () => {
  it("generic_plan_runner_forces_the_generic_plan_and_the_others_keep_the_default", async () => {
    const { generic, planned, writes: sql, hot } = await openDatabase();
    const modeOf = async (run: typeof sql) => (await run<{ mode: string }>(SHOW, []))[0].mode;
    const forced = databaseKind() === "postgres" && !behindTransactionPooler();
    expect(await modeOf(generic)).toBe(forced ? "force_generic_plan" : "auto");
    expect(await modeOf(planned)).toBe("auto");
    expect(await modeOf(sql)).toBe("auto");
    expect(await modeOf(hot)).toBe("auto");
  });

  it("generic_plan_runner_answers_each_call_with_its_own_values", async () => {
    const generic = (await openDatabase()).generic;
    const statement = { text: "SELECT x FROM generate_series(1, $1::int) x WHERE x > $2::int ORDER BY x LIMIT $3::int" };
    for (let i = 0; i < 8; i++) {
      const rows = await generic<{ x: number }>(statement, [10 + i, i, 3]);
      expect(rows.map((r) => r.x)).toEqual([i + 1, i + 2, i + 3]);
    }
  });
});
