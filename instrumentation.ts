// Runs once per server process: open the database (applying migrations), seed the demo tenant on
// a fresh embedded database, and print its API key that one time.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServerProcess } = await import("./server/startup");
  await startServerProcess();
}
