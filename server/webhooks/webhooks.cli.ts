// Operator CLI commands for webhooks, spread into COMMANDS of server/cli/run-cli.ts:
//   webhook create --tenant ID --url URL --events a,b [--description D] [--enabled true|false] [--max-per-second N]   (prints the secret once)
//   webhook update ID [--url URL] [--events a,b] [--description D] [--enabled true|false] [--max-per-second N]
//   webhook list --tenant ID | webhook delete ID
//   webhook roll-secret ID [--overlap-seconds N]   (prints the new secret once; the old one signs too for N s, default 24 h)
//   delivery list --tenant ID [--subscription ID] | delivery replay ID
import type { z } from "zod";
import { database } from "../db/database";
import { scopeToTenant } from "../db/tenant-scope";
import { type Flags, requiredFlag, UsageError, uuidArg } from "../lib/cli";
import { tenantDbOfFlag } from "../tenants/tenants";
import { OPERATOR } from "../audit/record-audit";
import { AppError } from "../lib/errors";
import {
  createSubscription,
  deleteSubscription,
  listDeliveries,
  listSubscriptions,
  replayDelivery,
  rollSubscriptionSecret,
  updateSubscription,
} from "./webhooks.service";
import { createSubscriptionInput, updateSubscriptionInput } from "./webhooks.types";

/** A row addressed by id alone: find its tenant first, then work through that tenant's scope. */
async function ownerTenant(model: "webhookSubscription" | "webhookDelivery", id: string, what: string) {
  const db = database().prisma;
  const row = await (db[model] as { findUnique(a: object): Promise<{ tenantId: string } | null> }).findUnique({ where: { id }, select: { tenantId: true } });
  if (!row) throw new UsageError(`${what} ${id} not found`);
  return row.tenantId;
}
/** The CLI's name of a body field (`max_deliveries_per_second` is `--max-per-second`). */
const flagOf = (field: string) => (field === "max_deliveries_per_second" ? "max-per-second" : field);

/** Parses with `schema`; the first problem becomes a usage error naming the flag. */
async function parseFlags<T>(schema: z.ZodType<T>, input: Record<string, unknown>): Promise<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UsageError(issue.path.length ? `--${flagOf(String(issue.path[0]))}: ${issue.message}` : issue.message);
}

/** The optional subscription flags given (numbers and booleans as the body has them). */
async function subscriptionFlags(flags: Flags): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (typeof flags.url === "string") out.url = flags.url;
  if (typeof flags.events === "string")
    out.events = flags.events
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  if (typeof flags.description === "string") out.description = flags.description;
  if (flags.enabled !== undefined) {
    if (flags.enabled !== "true" && flags.enabled !== "false") throw new UsageError("--enabled must be true or false");
    out.enabled = flags.enabled === "true";
  }
  if (flags["max-per-second"] !== undefined) {
    const raw = String(flags["max-per-second"]);
    out.max_deliveries_per_second = /^\d+$/.test(raw) ? Number(raw) : raw;
  }
  return out;
}

/** 400/409s from the service are the operator's input problems: show them as usage errors. */
async function asUsage<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.status < 500) throw new UsageError(err.message);
    throw err;
  }
}

export const WEBHOOK_COMMANDS = {
  "webhook create": async (_args: string[], flags: Flags) => {
    const tenantId = uuidArg(requiredFlag(flags, "tenant"), "--tenant");
    requiredFlag(flags, "url");
    requiredFlag(flags, "events");
    const input = await parseFlags(createSubscriptionInput, await subscriptionFlags(flags));
    const db = await tenantDbOfFlag(flags);
    return { ...(await asUsage(() => createSubscription(db, input, OPERATOR))), tenant_id: tenantId };
  },

  "webhook update": async (args: string[], flags: Flags) => {
    const id = uuidArg(args[0], "SUBSCRIPTION_ID");
    const input = await parseFlags(updateSubscriptionInput, { id, ...(await subscriptionFlags(flags)) });
    const tenantId = await ownerTenant("webhookSubscription", id, "subscription");
    const db = scopeToTenant(database().prisma, tenantId);
    return { ...(await asUsage(() => updateSubscription(db, input, OPERATOR))), tenant_id: tenantId };
  },

  "webhook list": async (_args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    return listSubscriptions(db, { limit: 100 });
  },

  "webhook delete": async (args: string[]) => {
    const id = uuidArg(args[0], "SUBSCRIPTION_ID");
    const tenantId = await ownerTenant("webhookSubscription", id, "subscription");
    return { ...(await deleteSubscription(scopeToTenant(database().prisma, tenantId), id, OPERATOR)), tenant_id: tenantId };
  },

  "webhook roll-secret": async (args: string[], flags: Flags) => {
    const id = uuidArg(args[0], "SUBSCRIPTION_ID");
    let overlap: number | undefined;
    if (flags["overlap-seconds"] !== undefined) {
      const raw = String(flags["overlap-seconds"]);
      if (!/^\d+$/.test(raw) || Number(raw) > 7 * 86_400) throw new UsageError("--overlap-seconds must be a whole number of seconds from 0 to 604800");
      overlap = Number(raw);
    }
    const tenantId = await ownerTenant("webhookSubscription", id, "subscription");
    const db = scopeToTenant(database().prisma, tenantId);
    return { ...(await rollSubscriptionSecret(db, id, OPERATOR, overlap)), tenant_id: tenantId };
  },

  "delivery list": async (_args: string[], flags: Flags) => {
    const db = await tenantDbOfFlag(flags);
    const subscription = flags.subscription === undefined ? undefined : uuidArg(flags.subscription, "--subscription");
    return listDeliveries(db, { limit: 100, subscription_id: subscription });
  },

  "delivery replay": async (args: string[]) => {
    const id = uuidArg(args[0], "DELIVERY_ID");
    const tenantId = await ownerTenant("webhookDelivery", id, "delivery");
    const db = scopeToTenant(database().prisma, tenantId);
    return asUsage(() => replayDelivery(db, id, OPERATOR));
  },
};
