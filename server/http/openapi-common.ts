// What both OpenAPI documents (/api/v1 and /api/agent/v1) share beyond the generator's output: the
// bearer scheme as the default, the one error envelope (its codes from server/lib/errors.ts), a
// licence line, and every tag an operation uses declared with a description (linters ask for both).
import type { OpenAPIObject } from "trpc-to-openapi";
import { ERROR_CODES } from "../lib/errors";
import { scopesAllowing, type Scope } from "../auth/principal";

export const BEARER_SCHEME = { bearerAuth: { type: "http" as const, scheme: "bearer", description: "An API key: `xapk_live_` followed by 48 hex characters" } };

/** An SPDX `LicenseRef-` identifier: the API is not open source; its terms are the operator's agreement. */
const LICENSE = { name: "Proprietary: use under your agreement with the service's operator", identifier: "LicenseRef-Proprietary" };
const CONTACT = { name: "The API support of this service's operator" };

/** The operation field naming the scopes that let a key call it (any one of them). */
const REQUIRED_SCOPES = "x-required-scopes";

/**
 * An operation's scope, from the one its procedure checks: `x-required-scopes` lists every scope that
 * grants it (`assistant:read` or `read`). The security requirement itself stays the bare bearer
 * scheme: OpenAPI 3.1 allows role names there, but linters (spectral:oas) read scopes of a non-OAuth
 * scheme as undefined, so the extension carries them.
 */
export function declareScope(operation: object, scope: Scope, also: readonly Scope[] = []): void {
  Object.assign(operation, { security: [{ bearerAuth: [] }], [REQUIRED_SCOPES]: scopesAllowing(scope, also) });
}

const ERROR_ENVELOPE = {
  type: "object" as const,
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: {
      type: "object" as const,
      required: ["code", "message"],
      additionalProperties: false,
      properties: { code: { type: "string" as const, enum: ERROR_CODES }, message: { type: "string" as const } },
    },
  },
};

/**
 * Completes a generated document: default security, `ErrorEnvelope` in place of the generator's own
 * per-status error schemas (they describe a body this API never sends), the licence, and the global
 * `tags` list. A tag used by an operation but missing from `tagDescriptions` is a build error here,
 * not a silent gap in the document.
 */
export function completeDocument(doc: OpenAPIObject, tagDescriptions: Record<string, string>): void {
  doc.security = [{ bearerAuth: [] }];
  doc.info.license = LICENSE;
  doc.info.contact = CONTACT;
  const schemas = Object.entries(doc.components?.schemas ?? {}).filter(([name]) => !name.startsWith("error."));
  doc.components = { ...doc.components, schemas: { ...Object.fromEntries(schemas), ErrorEnvelope: ERROR_ENVELOPE } };
  const used = new Set<string>();
  for (const item of Object.values(doc.paths ?? {}))
    for (const operation of Object.values(item ?? {})) for (const tag of (operation as { tags?: string[] }).tags ?? []) used.add(tag);
  for (const tag of used) if (!tagDescriptions[tag]) throw new Error(`OpenAPI tag '${tag}' has no description in completeDocument's tagDescriptions`);
  doc.tags = Object.entries(tagDescriptions).map(([name, description]) => ({ name, description }));
}
