import { defineConfig } from "prisma/config";

// Prisma 7 keeps the connection out of the schema. Migrations are applied by our own runner
// (scripts/migrate.ts, through @prisma/schema-engine-wasm) because the native engine cannot be
// downloaded everywhere; `prisma migrate deploy` still works where it can.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/unused" },
});
