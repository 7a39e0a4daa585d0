// How to receive webhooks on a developer machine (shown on the list and on each endpoint).
"use client";
import { Card } from "../../_ui/surface";
import { useLoopbackAllowed } from "./url-hint";

export function LocalDevelopmentNote() {
  const loopbackAllowed = useLoopbackAllowed();
  return (
    <Card className="p-5 text-sm text-slate-700" data-testid="local-development-note">
      <h2 className="mb-2 text-sm font-semibold text-slate-900">Receiving webhooks on your own machine</h2>
      <p>
        Deliveries come from this server, so a URL like <code className="font-mono text-xs">http://localhost:3000</code> on your laptop is out of its reach (and
        loopback and private addresses are refused). Expose your local port through an HTTPS tunnel, for example{" "}
        <code className="font-mono text-xs">cloudflared tunnel --url http://localhost:3000</code> or <code className="font-mono text-xs">ngrok http 3000</code>,
        and add the tunnel&apos;s https address as the endpoint URL.
      </p>
      {loopbackAllowed ? (
        <p className="mt-2" data-testid="loopback-allowed">
          This server runs with <code className="font-mono text-xs">WEBHOOK_ALLOW_LOOPBACK=1</code>: it delivers to{" "}
          <code className="font-mono text-xs">http://127.0.0.1</code>, <code className="font-mono text-xs">::1</code> and{" "}
          <code className="font-mono text-xs">localhost</code> directly (development only: never in production).
        </p>
      ) : (
        <p className="mt-2">
          When this platform itself runs on your machine, set <code className="font-mono text-xs">WEBHOOK_ALLOW_LOOPBACK=1</code> to let it deliver to{" "}
          <code className="font-mono text-xs">http://127.0.0.1</code> directly (development only: never in production).
        </p>
      )}
    </Card>
  );
}
