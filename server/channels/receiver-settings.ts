// Settings of the inbound receivers, read here only.
//   PUBLIC_BASE_URL  the scheme and host providers call (e.g. https://api.example.com), used to check
//                    signatures made over the full URL (Twilio). Default: none, the request's own URL
//                    (right only when no proxy sits in front of this server).
import { setting } from "../lib/settings";
let cached: { raw: string | undefined; value: string | null } | undefined;

export function publicBaseUrl(): string | null {
  const raw = setting("PUBLIC_BASE_URL");
  if (cached && cached.raw === raw) return cached.value;
  let value: string | null = null;
  if (raw?.trim()) {
    const url = new URL(raw.trim()); // a malformed setting fails loudly, at the first request
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("PUBLIC_BASE_URL must be an http(s) URL");
    value = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
  }
  cached = { raw, value };
  return value;
}
