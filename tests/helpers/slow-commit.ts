// A COMMIT that takes as long as the test says, on real PostgreSQL: a deferred constraint trigger
// sleeps at the commit of an offering titled, or an appointment whose customer_name is, "Slow
// commit <seconds>" (other rows commit at once).
import pg from "pg";

const SLOW_COMMIT_SQL = [
  `CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
   DECLARE named text := to_jsonb(NEW) ->> TG_ARGV[0];
   BEGIN
     IF named LIKE 'Slow commit %' THEN PERFORM pg_sleep(split_part(named, ' ', 3)::float); END IF;
     RETURN NULL;
   END $$`,
  "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON offerings DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit('title')",
  "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON appointments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit('customer_name')",
];

// A statement (not its COMMIT) that takes as long as the test says: an offering titled "Slow insert
// <seconds>" sleeps in a plain AFTER INSERT trigger, inside the INSERT (statement_timeout covers it;
// PostgreSQL does not apply statement_timeout to a COMMIT's deferred work).
const SLOW_INSERT_SQL = [
  `CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.title LIKE 'Slow insert %' THEN PERFORM pg_sleep(split_part(NEW.title, ' ', 3)::float); END IF;
     RETURN NULL;
   END $$`,
  "CREATE TRIGGER slow_insert AFTER INSERT ON offerings FOR EACH ROW EXECUTE FUNCTION slow_insert()",
];

/** Installs the slow-insert trigger in `url`'s database (once per database). */
export async function installSlowInsert(url = process.env.DATABASE_URL): Promise<void> {
  await onTestDatabase(async (client) => {
    for (const statement of SLOW_INSERT_SQL) await client.query(statement);
  }, url);
}

/** Runs `work` on a connection of its own to `url` (default: this test file's database). */
async function onTestDatabase<T>(work: (client: pg.Client) => Promise<T>, url = process.env.DATABASE_URL): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Installs the trigger in `url`'s database (once per database). */
export async function installSlowCommit(url = process.env.DATABASE_URL): Promise<void> {
  await onTestDatabase(async (client) => {
    for (const statement of SLOW_COMMIT_SQL) await client.query(statement);
  }, url);
}

/** The ids of the committed offerings titled `title`. */
export const offeringIdsTitled = (title: string, url = process.env.DATABASE_URL) =>
  onTestDatabase(async (client) => (await client.query<{ id: string }>("SELECT id FROM offerings WHERE title = $1", [title])).rows.map((r) => r.id), url);

/** The ids of the committed appointments whose customer_name is `name`. */
export const appointmentIdsNamed = (name: string, url = process.env.DATABASE_URL) =>
  onTestDatabase(
    async (client) => (await client.query<{ id: string }>("SELECT id FROM appointments WHERE customer_name = $1", [name])).rows.map((r) => r.id),
    url,
  );
