// Runs before the e2e server starts (the embedded database allows one process at a time): two
// tenants, an owner and a member in A, an owner in B. Writes the logins to E2E_DATA_DIR/fixtures.json.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { closeDatabase, openDatabase } from "../../server/db/database";
import { createTenant } from "../../server/tenants/tenants";
import { addMember, createDashboardUser } from "../../server/dashboard/users";

export const E2E_PASSWORD = "e2e password 123";

async function main() {
  const dir = process.env.E2E_DATA_DIR;
  if (!dir) throw new Error("E2E_DATA_DIR is not set");
  const run = Date.now().toString(36);
  await openDatabase();
  const tenantA = await createTenant({ name: "Acme Realty" });
  const tenantB = await createTenant({ name: "Bravo Spa" });
  const logins = {
    ownerA: `owner-a-${run}@e2e.test`,
    memberA: `member-a-${run}@e2e.test`,
    ownerB: `owner-b-${run}@e2e.test`,
  };
  for (const [who, email] of Object.entries(logins)) {
    await createDashboardUser({ email, password: E2E_PASSWORD, name: who });
  }
  await addMember({ tenantId: tenantA.id, email: logins.ownerA, role: "owner" });
  await addMember({ tenantId: tenantA.id, email: logins.memberA, role: "member" });
  await addMember({ tenantId: tenantB.id, email: logins.ownerB, role: "owner" });
  writeFileSync(
    path.join(dir, "fixtures.json"),
    JSON.stringify({ password: E2E_PASSWORD, tenantA: { id: tenantA.id, name: tenantA.name }, tenantB: { id: tenantB.id, name: tenantB.name }, logins }),
  );
  await closeDatabase();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
