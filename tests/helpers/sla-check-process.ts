// A separate process that runs the handoff SLA check once on a signal, against DATABASE_URL, so a
// test can start several and let them race for the same breaches. Prints "ready" once its database
// is open, waits for a line on stdin, then prints the number of breaches it claimed and exits.
import { openDatabase, closeDatabase } from "../../server/db/database";
import { checkHandoffSlas } from "../../server/conversations/sla-monitor";

await openDatabase();
process.stdout.write("ready\n");
process.stdin.once("data", async () => {
  const claimed = await checkHandoffSlas();
  process.stdout.write(`claimed ${claimed}\n`);
  await closeDatabase();
  process.exit(0);
});
