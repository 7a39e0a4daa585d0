// What the voice-agent providers' call webhooks (Retell, Vapi) share: a JSON body, signed with the
// channel connection's secret, that names the business number it is for. Checked in an order that
// trusts nothing unsigned beyond that number: the signature header is present, the body is JSON,
// the number finds an active connection, the signature verifies with its secret; only then are the
// body's size and depth bounded and its shape parsed.
import type { z } from "zod";
import { assertBoundedInput } from "../lib/bounded-input";
import { fromZodError } from "../lib/errors";
import { connectionCredentials, type ResolvedConnection } from "../channels/channel-connections";
import { withVerifiedConnection } from "./connection-gate";
import type { ProviderCredentials } from "../channels/channels.types";
import { badSignature, malformed, missingSignature, readRawBody, type ReceiverRequest } from "./receiver-http";

export type SignedCallWebhook<P extends "retell" | "vapi", S extends z.ZodType> = {
  provider: P;
  signatureHeader: string;
  /** The business number the payload is addressed to, in E.164; a malformed one is a 400 naming its field. */
  businessNumberOf: (payload: unknown) => string;
  verifies: (raw: string, credentials: ProviderCredentials[P], signature: string) => boolean | Promise<boolean>;
  payload: S;
};

/**
 * Verifies the webhook and runs `store` with its channel connection and parsed payload. `store`
 * writes through a store that checks the connection (`applyCallReport` given the connection), so
 * the connection may come from this process's cache (server/receivers/connection-gate.ts).
 */
export async function receiveSignedCallWebhook<P extends "retell" | "vapi", S extends z.ZodType>(
  req: ReceiverRequest,
  spec: SignedCallWebhook<P, S>,
  store: (connection: ResolvedConnection, data: z.output<S>) => Promise<void>,
): Promise<void> {
  const raw = await readRawBody(req);
  const signature = req.headers.get(spec.signatureHeader);
  if (!signature) throw missingSignature(spec.signatureHeader);
  const payload = parseJson(raw);
  const number = spec.businessNumberOf(payload);
  const gate = {
    provider: spec.provider,
    address: number,
    what: `${spec.provider} number ${number}`,
    verify: async (connection: ResolvedConnection) => {
      if (!(await spec.verifies(raw, connectionCredentials<P>(connection), signature))) throw badSignature(spec.signatureHeader);
    },
  };
  await withVerifiedConnection(gate, async (connection) => {
    assertBoundedInput(payload);
    const parsed = spec.payload.safeParse(payload);
    if (!parsed.success) throw fromZodError(parsed.error);
    await store(connection, parsed.data);
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw malformed("malformed JSON body");
  }
}
