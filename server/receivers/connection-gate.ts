// How every receiver finds and trusts the channel connection of a request: the one place that
// decides which credentials a signature is verified with, and that nothing is stored unless they
// are the connection's current ones. The connection comes from this process's cache
// (server/channels/channel-connections.ts) when it has it, so a request to a known address reads
// nothing before its store; every store checks the connection itself, in the same round trip or
// transaction as its writes (`connectionIsCurrentSql`): a message's ingest statement
// (server/conversations/ingest.ts), a call report's or a delivery report's transaction
// (`assertConnectionCurrentIn`). When the cached credentials do not verify the request, or the store
// finds the connection disabled, removed or re-keyed (it then stores nothing), the entry is dropped
// and the connection is read again, and the request verified again, with its current credentials.
import { AppError } from "../lib/errors";
import {
  cachedActiveConnection,
  findActiveConnection,
  forgetCachedConnection,
  StaleConnectionError,
  type ResolvedConnection,
} from "../channels/channel-connections";
import type { ChannelProvider } from "../channels/providers";
import { unknownAddress } from "./receiver-http";

export type ConnectionGate = {
  provider: ChannelProvider;
  /** The address (E.164 number, WhatsApp phone_number_id) the request is for. */
  address: string;
  /** How the 404 names the address: `no active channel connection for <what>`. */
  what: string;
  /** Throws (401 / 403) unless the request verifies with this connection's credentials. */
  verify: (connection: ResolvedConnection) => void | Promise<void>;
};

/** Stale answers in a row before giving up (a connection changed again between each read and store). */
const MAX_STALE = 3;

/**
 * `work` with the request's verified connection (see the top of this file). `work` must store only
 * through stores that check the connection (throwing `StaleConnectionError`), and may run again.
 */
export async function withVerifiedConnection<T>(gate: ConnectionGate, work: (connection: ResolvedConnection) => Promise<T>): Promise<T> {
  const cached = cachedActiveConnection(gate.provider, gate.address);
  if (cached) {
    let verified = true;
    try {
      await gate.verify(cached);
    } catch {
      verified = false;
    }
    if (verified) {
      try {
        return await work(cached);
      } catch (err) {
        if (!(err instanceof StaleConnectionError)) throw err;
      }
    }
    // Re-keyed, disabled or removed since it was cached (or the request is forged): read it again.
    forgetCachedConnection(gate.provider, gate.address);
  }
  for (let stale = 0; ; stale++) {
    const connection = await findActiveConnection(gate.provider, gate.address);
    if (!connection) throw unknownAddress(gate.what);
    await gate.verify(connection);
    try {
      return await work(connection);
    } catch (err) {
      if (!(err instanceof StaleConnectionError)) throw err;
      forgetCachedConnection(gate.provider, gate.address);
      if (stale + 1 >= MAX_STALE) {
        throw new AppError("internal_error", "the channel connection is changing; retry", { status: 503, headers: { "Retry-After": "1" } });
      }
    }
  }
}
