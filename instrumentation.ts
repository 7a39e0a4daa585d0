// Under `next start`: runs once per server process to open the database (applying migrations), seed
// the demo tenant on a fresh embedded database (printing its API key that one time) and start the
// background work. Under `npm start` the lean front does all of that itself and answers every API
// path, so Next's bundle never loads the server's code (one live copy of each module).
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.TDP_LEAN_FRONT === "1") return;
  const { startServerProcess } = await import("./server/http/startup");
  await startServerProcess();
}
