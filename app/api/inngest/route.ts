// Inngest's endpoint: serves the webhook delivery function (the ladder) to an Inngest server.
import { serve } from "inngest/next";
import { deliverWebhook, inngest } from "@/server/webhooks/inngest-engine";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export const { GET, POST, PUT } = serve({ client: inngest, functions: [deliverWebhook] });
