// The README's settings table is exactly the one generated from server/lib/settings.ts: every declared
// setting is documented with its default, and the README documents no setting the code does not read.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { README, withSettingsTable } from "../../scripts/settings-docs";
import { SETTINGS } from "../../server/lib/settings";

describe("README settings table", () => {
  it("matches_the_table_generated_from_server_settings", () => {
    const readme = readFileSync(README, "utf8");
    expect(readme).toBe(withSettingsTable(readme)); // on failure: npm run settings:docs
  });

  it("names_every_declared_setting_once_and_no_other", () => {
    const block = readFileSync(README, "utf8").split("<!-- settings:start")[1]!.split("<!-- settings:end")[0]!;
    const documented = [...block.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(documented).toEqual(Object.keys(SETTINGS));
  });
});
