// `emitEvent` for any event of the catalog, checked like the domains' own: for tooling that is not
// a domain (the bench, the tests). Domains emit through their own `<domain>.events.ts` declarations.
import { eventEmitter } from "../outbox/emit-event";
import { EVENT_PAYLOADS } from "./catalog";

export const emitEvent = eventEmitter(EVENT_PAYLOADS);
