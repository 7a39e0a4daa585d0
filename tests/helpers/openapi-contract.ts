// Checks an answer of the API against the OpenAPI document: the status must be documented for the
// operation, and the body must match that status's schema. `call()` (tests/helpers/api.ts) runs it
// on every answer the API tests receive, so the document cannot claim less, or other, than the API does.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { getOpenApiDocument } from "../../server/http/openapi";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Route = { method: string; template: string; pattern: RegExp };
type Validate = ReturnType<Ajv2020["compile"]>;
let state: { ajv: Ajv2020; doc: any; routes: Route[]; validators: Map<string, Validate> } | undefined;

function load() {
  if (state) return state;
  const doc = getOpenApiDocument() as any;
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(doc, "openapi");
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    for (const method of Object.keys(item)) routes.push({ method: method.toUpperCase(), template, pattern });
  }
  state = { ajv, doc, routes, validators: new Map() };
  return state;
}

/** The validator of the schema at `ref`, compiled once per run (compiling is what costs). */
function validatorOf(ref: string): Validate {
  const { ajv, validators } = load();
  let validate = validators.get(ref);
  if (!validate) {
    validate = ajv.compile({ $ref: ref });
    validators.set(ref, validate);
  }
  return validate;
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/** The documented operation answering `method path` (path relative to /api/v1, query allowed), if any. */
function documentedOperation(method: string, path: string): { template: string; operation: any } | null {
  const { doc, routes } = load();
  const pathname = path.split("?")[0];
  const route = routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(pathname));
  return route ? { template: route.template, operation: doc.paths[route.template][method.toLowerCase()] } : null;
}

/** Why an answer contradicts the document, or null when it matches (or addresses no documented operation). */
export function contractMismatch(method: string, path: string, status: number, body: unknown): string | null {
  const found = documentedOperation(method, path);
  if (!found) return null; // an unknown path or method: its 404 is the router's, not an operation's
  const response = found.operation.responses?.[String(status)];
  if (!response)
    return `${method} ${found.template} answered ${status}, which the document does not list (${Object.keys(found.operation.responses).join(", ")})`;
  const schemaRef = `openapi#/${pointer("paths", found.template, method.toLowerCase(), "responses", String(status), "content", "application/json", "schema")}`;
  if (!response.content?.["application/json"])
    return body === undefined ? null : `${method} ${found.template} ${status} has a body the document does not describe`;
  const validate = validatorOf(schemaRef);
  if (validate(body)) return null;
  const error = validate.errors?.[0];
  return `${method} ${found.template} ${status}: body does not match the documented schema at ${error?.instancePath || "/"} (${error?.message})`;
}

/** Validates `value` against the schema at a JSON pointer of the document (e.g. a webhook's payload). */
export function matchesDocumentSchema(jsonPointer: string, value: unknown): string | null {
  const validate = validatorOf(`openapi#${jsonPointer}`);
  return validate(value) ? null : `${validate.errors?.[0]?.instancePath || "/"} ${validate.errors?.[0]?.message}`;
}
