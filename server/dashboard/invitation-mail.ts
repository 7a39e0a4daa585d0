// The invitation email, through an optional HTTP mail transport. With INVITATION_MAIL_WEBHOOK_URL set,
// each invitation (and each resend) is POSTed there as JSON `{ to, subject, text }` (with
// `Authorization: Bearer INVITATION_MAIL_WEBHOOK_TOKEN` when that is set): a small relay, a serverless
// function or a mail provider's HTTP API adapter turns it into an email. Without it nothing is sent and
// the dashboard shows the link to copy. A failed send never fails the invitation: the link is still
// shown, with the reason.
import { setting } from "../lib/settings";

/** How long one send may take before the invitation is answered without it. */
const SEND_TIMEOUT_MS = 5_000;

export type MailOutcome = { sent: boolean; error: string | null };

function mailTransportUrl(): string | null {
  return setting("INVITATION_MAIL_WEBHOOK_URL") ?? null;
}

export function invitationMessage(input: { to: string; tenantName: string; role: string; link: string; inviter: string }) {
  return {
    to: input.to,
    subject: `You are invited to ${input.tenantName}`,
    text: [
      `${input.inviter} invited you to join ${input.tenantName} as ${input.role}.`,
      "",
      `Accept the invitation: ${input.link}`,
      "",
      "The link works for 7 days. If you did not expect this, ignore this email.",
    ].join("\n"),
  };
}

export async function sendInvitationMail(message: { to: string; subject: string; text: string }): Promise<MailOutcome> {
  const url = mailTransportUrl();
  if (!url) return { sent: false, error: null };
  const token = setting("INVITATION_MAIL_WEBHOOK_TOKEN");
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      redirect: "error",
    });
    await res.body?.cancel();
    return res.ok ? { sent: true, error: null } : { sent: false, error: `the mail transport answered ${res.status}` };
  } catch (err) {
    const timedOut = err instanceof Error && err.name === "TimeoutError";
    return {
      sent: false,
      error: timedOut ? `the mail transport did not answer within ${SEND_TIMEOUT_MS / 1000} s` : "the mail transport could not be reached",
    };
  }
}
