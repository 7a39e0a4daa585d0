// The database is opened once, before anything uses it (the server before it serves, the CLI before
// a command): `database()` answers the open one without waiting, and says plainly when it is not.
import { afterAll, describe, expect, it } from "vitest";
import { closeDatabase, DatabaseNotOpenError, database, databaseIfOpen, openDatabase } from "../../server/db/database";
import { databaseKind } from "../../server/db/location";

afterAll(() => closeDatabase());

describe("the database's door", () => {
  it("before_openDatabase_database_throws_DatabaseNotOpenError_and_databaseIfOpen_is_undefined", async () => {
    await closeDatabase();
    expect(() => database()).toThrow(DatabaseNotOpenError);
    expect(() => database()).toThrow("the database is not open: openDatabase() runs before serving, and before a CLI command or a test uses it");
    expect(databaseIfOpen()).toBeUndefined();
  });

  it("opening_twice_at_once_gives_one_database_whose_runners_all_answer", async () => {
    await closeDatabase();
    const [a, b] = await Promise.all([openDatabase(), openDatabase()]);
    expect(a).toBe(b);
    expect(database()).toBe(a);
    expect(databaseIfOpen()).toBe(a);
    expect(a.kind).toBe(databaseKind());
    const one = { text: "SELECT 1::int AS one" };
    for (const run of [a.hot, a.writes, a.planned, a.generic]) expect(await run<{ one: number }>(one, [])).toEqual([{ one: 1 }]);
    expect(await a.prisma.$queryRawUnsafe<{ one: number }[]>(one.text)).toEqual([{ one: 1 }]);
    expect(a.session === null).toBe(a.kind === "pglite");
  });

  it("after_closeDatabase_the_next_open_is_a_new_database", async () => {
    const first = await openDatabase();
    await closeDatabase();
    expect(() => database()).toThrow(DatabaseNotOpenError);
    const second = await openDatabase();
    expect(second).not.toBe(first);
    expect(await second.hot<{ one: number }>({ text: "SELECT 1::int AS one" }, [])).toEqual([{ one: 1 }]);
  });
});
