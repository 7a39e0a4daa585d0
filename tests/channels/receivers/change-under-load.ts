// The receivers' two-process invariants share one shape: requests stream into one process while
// the connection changes through the other, and no stale cache may admit a request after the change.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect } from "vitest";
import type { Running } from "../../../scripts/bench/services";
import { SIGN_IN_ENV } from "../../dashboard/http-session";
import { startReceiverFront } from "../../helpers/receiver-front";

/** Two receiver processes on the suite's database, started before the file's tests and stopped after them. */
export function twoReceiverFronts(publicBaseUrl: string): Running[] {
  const fronts: Running[] = [];
  beforeAll(async () => {
    const env = { ...SIGN_IN_ENV, PUBLIC_BASE_URL: publicBaseUrl, WEBHOOK_ENGINE: "off" };
    fronts.push(await startReceiverFront(env), await startReceiverFront(env));
  }, 240_000);
  afterAll(async () => {
    await Promise.all(fronts.map((front) => front.stop()));
  });
  return fronts;
}

/** One request of the stream: the provider's id of what it carried, the answer's status, when it started. */
export type Sent = { id: string; status: number; startedAt: number };

/** Runs `send` with `workers` in flight until `stop()`; what each got. */
function stream(send: () => Promise<Sent>, workers: number) {
  const sent: Sent[] = [];
  let running = true;
  const done = Promise.all(
    Array.from({ length: workers }, async () => {
      while (running) sent.push(await send());
    }),
  );
  return {
    sent,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/**
 * Streams `send` for 500 ms, runs `change` (which must answer 200), streams 500 ms more, and then
 * expects: every request started after the change answered `refusedWith`; no answer but 200 and
 * `refusedWith`; some 200s; and stored (`stored()`) exactly the 200s beside the `warmups` stored first.
 */
export async function expectRefusedAtOnceUnderLoad(opts: {
  send: () => Promise<Sent>;
  workers: number;
  change: () => Promise<{ status: number }>;
  refusedWith: number;
  stored: () => Promise<string[]>;
  warmups: number;
}): Promise<void> {
  const load = stream(opts.send, opts.workers);
  await sleep(500);
  expect((await opts.change()).status).toBe(200);
  const changedAt = performance.now();
  await sleep(500);
  await load.stop();

  const after = load.sent.filter((s) => s.startedAt > changedAt);
  expect(after.length).toBeGreaterThan(0);
  expect(after.filter((s) => s.status !== opts.refusedWith)).toEqual([]);
  expect(load.sent.filter((s) => s.status !== 200 && s.status !== opts.refusedWith)).toEqual([]);
  const answered = load.sent.filter((s) => s.status === 200).map((s) => s.id);
  expect(answered.length).toBeGreaterThan(0);
  const stored = await opts.stored();
  expect(stored).toHaveLength(answered.length + opts.warmups);
  expect(stored).toEqual(expect.arrayContaining(answered));
}
