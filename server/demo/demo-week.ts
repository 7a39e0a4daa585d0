// A receptionist's week for the demo tenant, beyond the scripted leads: calls the assistant answered
// (with transcripts and summaries), calls nobody answered (no answer, busy, a caller who hung up
// while it rang or before the assistant spoke), and short SMS and WhatsApp chats, spread over the
// last seven days in business hours. All of it is provider traffic through the receivers.
import type { TenantDb } from "../db/tenant-scope";
import { driveChat, retellCall, twilioUnansweredCall, type ChatLine, type DemoChannels } from "./demo-traffic";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** `daysAgo` days before today (UTC), at `hour`:`minute`; never in the future. */
function at(now: number, daysAgo: number, hour: number, minute = 0): Date {
  const midnight = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
  return new Date(Math.min(midnight - daysAgo * DAY + hour * HOUR + minute * 60_000, now - (daysAgo + 1) * 60_000));
}

type Turn = ["customer" | "assistant", string];

const ANSWERED_CALLS: { caller: string; daysAgo: number; hour: number; summary: string; turns: Turn[] }[] = [
  {
    caller: "+971502200101",
    daysAgo: 6,
    hour: 9,
    summary: "Asked whether the Marina apartment allows pets; it does (cats and small dogs).",
    turns: [
      ["assistant", "Good morning, Demo Realty and Spa, how can I help?"],
      ["customer", "Hi, does the Marina two-bedroom allow pets?"],
      ["assistant", "Yes, cats and small dogs are welcome in that building."],
      ["customer", "Great, thanks."],
    ],
  },
  {
    caller: "+971502200102",
    daysAgo: 5,
    hour: 11,
    summary: "Booked a deep tissue massage for Thursday 18:00.",
    turns: [
      ["assistant", "Demo Realty and Spa, good morning."],
      ["customer", "I'd like a deep tissue massage on Thursday evening."],
      ["assistant", "Thursday at 18:00 is free. Shall I book it under your number?"],
      ["customer", "Yes, please."],
      ["assistant", "Booked. You will get a confirmation by SMS."],
    ],
  },
  {
    caller: "+971502200103",
    daysAgo: 4,
    hour: 15,
    summary: "Asked about service charges for the Downtown studio.",
    turns: [
      ["assistant", "Hello, Demo Realty and Spa."],
      ["customer", "What are the service charges on the Downtown studio?"],
      ["assistant", "About 14 AED per square foot a year; I can send the breakdown by WhatsApp."],
      ["customer", "Please do."],
    ],
  },
  {
    caller: "+971502200104",
    daysAgo: 3,
    hour: 10,
    summary: "Rescheduled a haircut from Monday to Wednesday 12:00.",
    turns: [
      ["assistant", "Demo Realty and Spa, how can I help?"],
      ["customer", "I need to move my Monday haircut."],
      ["assistant", "Wednesday at 12:00 is open. Does that work?"],
      ["customer", "Perfect."],
    ],
  },
  {
    caller: "+971502200105",
    daysAgo: 1,
    hour: 13,
    summary: "Wanted a viewing of the Marina apartment; passed to an agent for Saturday.",
    turns: [
      ["assistant", "Good afternoon, Demo Realty and Spa."],
      ["customer", "Can I see the Marina apartment this Saturday?"],
      ["assistant", "I will ask an agent to confirm a Saturday slot and call you back."],
      ["customer", "Thank you."],
    ],
  },
  {
    caller: "+971502200106",
    daysAgo: 0,
    hour: 8,
    summary: "Asked for opening hours today.",
    turns: [
      ["assistant", "Good morning, Demo Realty and Spa."],
      ["customer", "Are you open until ten tonight?"],
      ["assistant", "Yes, we are open until 22:00 today."],
    ],
  },
];

/** Calls that never reached the assistant (Twilio reports them), and one caller who hung up first. */
const UNANSWERED_CALLS: { caller: string; daysAgo: number; hour: number; status: "no-answer" | "busy" | "canceled" }[] = [
  { caller: "+971502200201", daysAgo: 6, hour: 19, status: "no-answer" },
  { caller: "+971502200202", daysAgo: 4, hour: 12, status: "busy" },
  { caller: "+971502200203", daysAgo: 2, hour: 17, status: "canceled" },
];
const ABANDONED_CALL = { caller: "+971502200204", daysAgo: 1, hour: 9 };

const CHATS: {
  channel: "sms" | "whatsapp";
  via: "twilio" | "whatsapp_cloud";
  customer: string;
  name: string;
  daysAgo: number;
  hour: number;
  lines: ChatLine[];
}[] = [
  {
    channel: "sms",
    via: "twilio",
    customer: "+971502200301",
    name: "Hana Yusuf",
    daysAgo: 6,
    hour: 10,
    lines: [
      ["customer", "Is parking included with the Marina apartment?"],
      ["assistant", "Yes, one covered space is included."],
      ["customer", "Thanks!"],
    ],
  },
  {
    channel: "whatsapp",
    via: "whatsapp_cloud",
    customer: "+971502200302",
    name: "Rami Haddad",
    daysAgo: 5,
    hour: 16,
    lines: [
      ["customer", "Hi, do you do couples massages?"],
      ["assistant", "We do, 60 or 90 minutes. Which day suits you?"],
      ["customer", "Friday afternoon"],
      ["assistant", "Friday at 15:00 is free for two. Shall I hold it?"],
      ["customer", "Yes please"],
    ],
  },
  {
    channel: "sms",
    via: "twilio",
    customer: "+971502200303",
    name: "Priya Nair",
    daysAgo: 4,
    hour: 9,
    lines: [
      ["customer", "Running 10 minutes late for my 9:30 appointment, sorry!"],
      ["assistant", "No problem, we will see you at 9:40."],
    ],
  },
  {
    channel: "whatsapp",
    via: "twilio",
    customer: "+971502200304",
    name: "Tom Becker",
    daysAgo: 3,
    hour: 14,
    lines: [
      ["customer", "Can you send photos of the Downtown studio?"],
      ["assistant", "Of course, here is the gallery: demo.example/studio"],
      ["customer", "Looks nice. Is it furnished?"],
      ["assistant", "It comes fully furnished."],
    ],
  },
  {
    channel: "sms",
    via: "twilio",
    customer: "+971502200305",
    name: "Aisha Rahman",
    daysAgo: 2,
    hour: 11,
    lines: [
      ["customer", "What time do you close on Saturday?"],
      ["assistant", "At 22:00 on Saturdays."],
    ],
  },
  {
    channel: "whatsapp",
    via: "whatsapp_cloud",
    customer: "+971502200306",
    name: "Daniel Ortiz",
    daysAgo: 1,
    hour: 18,
    lines: [
      ["customer", "Hello, I missed your call earlier"],
      ["assistant", "Thanks for writing back! An agent wanted to confirm your Saturday viewing at 11:00."],
      ["customer", "Saturday 11:00 is fine"],
    ],
  },
  {
    channel: "sms",
    via: "twilio",
    customer: "+971502200307",
    name: "Lena Vogel",
    daysAgo: 0,
    hour: 7,
    lines: [
      ["customer", "Do you have any slots for a haircut today?"],
      ["assistant", "Yes, 13:00 or 16:30. Which would you like?"],
    ],
  },
];

/** Feeds the week's calls and chats through the receivers. */
export async function driveReceptionistWeek(db: TenantDb, channels: DemoChannels, now = Date.now()): Promise<void> {
  for (const call of ANSWERED_CALLS) await retellCall(channels, call.caller, at(now, call.daysAgo, call.hour, 12), call.turns, call.summary);
  for (const call of UNANSWERED_CALLS) await twilioUnansweredCall(channels, call.caller, call.status, at(now, call.daysAgo, call.hour, 40));
  // Rang through to the assistant, but the caller hung up before it spoke: Retell reports it, missed.
  await retellCall(channels, ABANDONED_CALL.caller, at(now, ABANDONED_CALL.daysAgo, ABANDONED_CALL.hour, 5), [["customer", "Hello?"]], null);
  for (const chat of CHATS) {
    const start = at(now, chat.daysAgo, chat.hour, 20).getTime();
    // A reply about a minute after each message, and the customer a few minutes later.
    const times = chat.lines.map((_, i) => new Date(Math.min(start + i * 4 * 60_000, now - (chat.lines.length - i) * 1000)));
    await driveChat(db, channels, { ...chat, times });
  }
}
