// How the README's test command (scripts/test.sh) splits the vitest files, by folder under tests/.
// A new folder runs on both databases and beside other files unless it is listed here.

/**
 * Run once, on PostgreSQL: folders whose tests exercise domain logic through Prisma and the same SQL
 * on either driver, and nothing the embedded default swaps (the PGlite driver and its single
 * connection, the in-process rate-limit store, the embedded worker, the first start from the data
 * directory). The driver itself still meets every route on PGlite through tests/api.
 */
export const POSTGRES_ONLY = ["analytics", "appointments", "architecture", "auth", "calls", "crm", "csat", "events", "leads", "lib", "offerings", "trpc"];

/**
 * Run one file at a time, apart from the rest: on a shared PostgreSQL another file's delivery worker
 * (or a mounted server's) would claim their pending deliveries, and their timing witnesses (a
 * subscription's rate as its consumer sees it) must not share the 2 cores with another file.
 */
export const ONE_AT_A_TIME = ["webhooks", "inngest"];
