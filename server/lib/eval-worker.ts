// A worker thread run from source text: neither bundle (the compiled server, Next's) gives a worker a
// file of its own. The ops work that must stay off the main thread (the trace export's HTTP client,
// the metrics listener's HTTP server) runs this way: served requests and that work then never share
// Node's http and stream internals, whose optimized code the other side's objects threw away
// (docs/perf/2026-11-metrics-and-tracing-cost.md).
import { Worker } from "node:worker_threads";

/**
 * Starts `source` in a worker thread and resolves once its first message says `{ ready: true }`;
 * rejects on `{ failed: "why" }`, an error, or an exit before that. The worker is unref'd: idle, it
 * keeps no process alive.
 */
export async function startEvalWorker(source: string, workerData: unknown): Promise<Worker> {
  const worker = new Worker(source, { eval: true, workerData });
  try {
    await new Promise<void>((ready, failed) => {
      const exited = (code: number) => failed(new Error(`exited with code ${code}`));
      worker.once("message", (message: { ready?: boolean; failed?: string }) => {
        worker.off("error", failed).off("exit", exited);
        if (message.ready) ready();
        else failed(new Error(message.failed ?? "the worker did not start"));
      });
      worker.once("error", failed).once("exit", exited);
    });
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  worker.unref();
  return worker;
}
