// The shape of the request and response examples each domain declares for the OpenAPI document
// (`server/<domain>/<domain>.examples.ts`). A test sends every request example to a running server
// and validates every response example against the document, so an example cannot drift from the
// contract it illustrates.
type OperationExample = {
  /** Path parameters, by name (ids that exist only in the example's world: the test substitutes its own). */
  path?: Record<string, string>;
  /** Query parameters, by name. */
  query?: Record<string, string | number>;
  /** The JSON request body. */
  body?: Record<string, unknown>;
  /** The success answer's body. */
  response: unknown;
};

/** Keyed by `METHOD /path` as in the document, e.g. `PATCH /offerings/{id}`. */
export type OperationExamples = Record<string, OperationExample>;

export const EXAMPLE_TENANT_ID = "3f1c2a9e-5b7d-4e8f-9a10-1b2c3d4e5f60";
export const EXAMPLE_TIME = "2026-11-21T10:00:00.000Z";
export const EXAMPLE_LATER = "2026-11-21T10:05:00.000Z";
