// A fresh embedded start (a real server process on a new PGlite directory, the demo seeded by
// default): the demo tenant's week arrived as provider traffic through the receivers, so its API
// shows answered and missed calls with transcripts, SMS and WhatsApp conversations whose replies
// were reported delivered, and the analytics rollup counts them.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort, spawnServer, type Running } from "../../scripts/bench/services";
import { mountEnv, ROOT } from "../helpers/http-mounts";

let server: Running;
let key: string;

const get = async (p: string) => {
  const res = await fetch(`${server.url}/api/v1${p}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return res.json() as Promise<any>;
};

type Conversation = { id: string; channel: string; customer_identifier: string; message_count: number };

describe("the demo tenant of a fresh embedded start", () => {
  beforeAll(async () => {
    const port = await freePort();
    server = await spawnServer("fresh embedded start", ["--import", "tsx", path.join(ROOT, "tests/helpers/receiver-front-main.ts")], {
      port,
      cwd: ROOT,
      readyPath: "/api/v1",
      timeoutMs: 180_000,
      env: mountEnv({
        DATABASE_URL: undefined,
        REDIS_URL: undefined,
        DATA_DIR: mkdtempSync(path.join(tmpdir(), "demo-week-")),
        DEMO_SEED: undefined,
        SKIP_MIGRATIONS: undefined,
        PUBLIC_BASE_URL: undefined,
      }),
    });
    // Seeded behind the ready server: the key is printed when the week is in.
    key = await vi.waitFor(
      () => {
        const printed = /Demo API key \(shown once\): (\S+)/.exec(server.output());
        if (!printed) throw new Error(`no demo key printed yet:\n${server.output()}`);
        return printed[1];
      },
      { timeout: 120_000, interval: 50 },
    );
  }, 200_000);
  afterAll(async () => server?.stop());

  it("has_answered_and_missed_calls_with_transcripts_and_sms_and_whatsapp_chats_with_delivered_replies", async () => {
    const conversations: Conversation[] = (await get("/conversations?limit=100")).data;
    const voice = conversations.filter((c) => c.channel === "voice");
    const calls = (await Promise.all(voice.map(async (c) => (await get(`/conversations/${c.id}/calls`)).data))).flat();
    expect(calls.filter((c: any) => c.status === "completed")).toHaveLength(7);
    expect(
      calls
        .filter((c: any) => c.status === "missed")
        .map((c: any) => c.end_reason)
        .sort(),
    ).toEqual(["busy", "canceled", "no-answer", "user_hangup"]);
    const answered = calls.find((c: any) => c.summary === "Booked a deep tissue massage for Thursday 18:00.");
    const transcript = (await get(`/conversations/${answered.conversation_id}/messages`)).data;
    expect(transcript.map((m: any) => m.author)).toEqual(["assistant", "customer", "assistant", "customer", "assistant"]);
    expect(transcript[1].body).toBe("I'd like a deep tissue massage on Thursday evening.");

    for (const channel of ["sms", "whatsapp"]) {
      const chats = conversations.filter((c) => c.channel === channel);
      expect(chats.length).toBeGreaterThanOrEqual(5);
      for (const chat of chats) expect(chat.message_count).toBeGreaterThan(0);
    }
    const rami = conversations.find((c) => c.customer_identifier === "+971502200302")!;
    const messages = (await get(`/conversations/${rami.id}/messages`)).data;
    expect(messages.map((m: any) => [m.direction, m.status])).toEqual([
      ["inbound", "received"],
      ["outbound", "delivered"],
      ["inbound", "received"],
      ["outbound", "delivered"],
      ["inbound", "received"],
    ]);
  });

  it("rollup_of_the_week_counts_its_calls_chats_and_messages", async () => {
    const rollup = await get("/analytics/weekly-rollup?days=7");
    expect(rollup.totals.conversations.by_channel).toEqual({ voice: 11, sms: 4, whatsapp: 4, webchat: 1, email: 1 });
    const dailyInbound = rollup.daily.reduce((n: number, d: any) => n + d.messages.inbound, 0);
    expect(rollup.totals.messages.inbound).toBe(dailyInbound);
    expect(rollup.totals.messages.inbound).toBeGreaterThan(20);
    expect(rollup.totals.messages.outbound).toBeGreaterThan(20);
    // Spread over the week: at least five of its seven days saw conversations.
    expect(rollup.daily.filter((d: any) => d.conversations.total > 0).length).toBeGreaterThanOrEqual(5);
  });
});
