// Reads a tenant's state through /api/v1 of the running front (the embedded database belongs to the
// server process while it runs): what a receiver wrote, or that it wrote nothing.
export type TenantState = { conversations: any[]; messages: any[]; calls: any[]; events: any[] };

async function get(baseUrl: string, key: string, path: string): Promise<any> {
  const res = await fetch(`${baseUrl}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Every page of a list. */
async function all(baseUrl: string, key: string, path: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page: any = await get(baseUrl, key, `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

/** The tenant's conversations, every message and call of each, and its events (oldest first). */
export async function tenantState(baseUrl: string, key: string): Promise<TenantState> {
  const conversations = await all(baseUrl, key, "/conversations");
  const messages: any[] = [];
  const calls: any[] = [];
  for (const c of conversations) {
    messages.push(...(await all(baseUrl, key, `/conversations/${c.id}/messages`)));
    calls.push(...(await all(baseUrl, key, `/conversations/${c.id}/calls`)));
  }
  const events = (await all(baseUrl, key, "/events")).reverse();
  return { conversations, messages, calls, events };
}

export const eventTypes = (state: TenantState) => state.events.map((e) => e.event);
