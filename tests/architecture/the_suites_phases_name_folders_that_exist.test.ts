// scripts/test.sh splits the suite by the folders tests/phases.ts names: a misspelt or removed
// folder there would silently run its tests on PostgreSQL only, or beside other files.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { ONE_AT_A_TIME, POSTGRES_ONLY } from "../phases";

const testsDir = path.resolve(__dirname, "..");
const hasTestFiles = (dir: string): boolean =>
  readdirSync(dir, { withFileTypes: true }).some((e) => (e.isDirectory() ? hasTestFiles(path.join(dir, e.name)) : e.name.endsWith(".test.ts")));

it("every folder tests/phases.ts names exists and holds test files, and none is named twice", () => {
  const named = [...ONE_AT_A_TIME, ...POSTGRES_ONLY];
  expect(named.filter((folder) => !existsSync(path.join(testsDir, folder)) || !hasTestFiles(path.join(testsDir, folder)))).toEqual([]);
  expect(new Set(named).size).toBe(named.length);
});
