// OpenAI's strict mode (strict function calling, structured outputs) takes a subset of JSON Schema:
// every property listed in `required` (an optional one admits null instead), `additionalProperties:
// false` on every object, and only some keywords (strings: pattern, format; numbers: minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, multipleOf; arrays: minItems, maxItems). Agent
// frameworks turn it on by default for function tools. `strictInputSchema` derives that form from
// a tool's input JSON Schema (itself generated from the zod schema that validates the calls);
// `strictArgumentsReader` turns arguments shaped by it back into the tool's own input, so the server
// accepts exactly what the strict schema describes:
//   - an optional argument may be null, which means "not given" (the model must send every key);
//   - a free-form object (a map such as `attributes`) cannot be written with `additionalProperties:
//     false`, so the strict schema describes it as a list of `{ key, value }` pairs, which the
//     server also accepts in place of the object.
import { badRequest } from "../lib/errors";

type JsonSchema = Record<string, unknown>;

/** The string formats strict mode supports; a pattern beside one of them is left out (the format says it). */
const STRICT_FORMATS = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]);
/** Keywords strict mode takes, by the type they apply to (plus the ones any schema may carry). */
const KEPT: Record<string, readonly string[]> = {
  any: ["type", "description", "enum", "const", "anyOf", "$ref"],
  string: ["pattern", "format"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  array: ["items", "minItems", "maxItems"],
  object: ["properties", "required", "additionalProperties"],
};

const isObject = (v: unknown): v is JsonSchema => typeof v === "object" && v !== null && !Array.isArray(v);

/** A map: an object schema that names no properties (zod's `z.record`). */
const isMapSchema = (s: JsonSchema) => s.type === "object" && !isObject(s.properties);

const admitsNull = (s: JsonSchema): boolean =>
  s.type === "null" || (Array.isArray(s.type) && s.type.includes("null")) || (Array.isArray(s.anyOf) && s.anyOf.some((b) => isObject(b) && admitsNull(b)));

/** What a dropped keyword meant, said in the description instead. */
function droppedAsText(s: JsonSchema): string[] {
  const said: string[] = [];
  const { minLength: min, maxLength: max } = s as { minLength?: number; maxLength?: number };
  if (min !== undefined && max !== undefined) said.push(`${min} to ${max} characters.`);
  else if (max !== undefined) said.push(`At most ${max} characters.`);
  else if (min !== undefined && min > 0) said.push(`At least ${min} character${min === 1 ? "" : "s"}.`);
  if (s.format !== undefined && !STRICT_FORMATS.has(String(s.format))) said.push(`Format: ${String(s.format)}.`);
  if (s.default !== undefined) said.push(`Default: ${JSON.stringify(s.default)}.`);
  return said;
}

/** The description with sentences added (a period closing the original first, where it has none). */
function withText(description: unknown, extra: string[]): string | undefined {
  const original = typeof description === "string" ? description.trim() : "";
  if (extra.length === 0) return original || undefined;
  return [original && !/[.!?)]$/.test(original) ? `${original}.` : original, ...extra].filter(Boolean).join(" ");
}

/** One schema in strict form (not the root: see strictInputSchema). */
function strictOf(s: JsonSchema): JsonSchema {
  if (isMapSchema(s)) return pairsOf(s);
  if (Object.keys(s).filter((k) => k !== "description").length === 0) {
    // Any JSON value: strict mode has no schema for it; a scalar or null is the most it can carry.
    return { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }], ...(s.description ? { description: s.description } : {}) };
  }
  const types = Array.isArray(s.type) ? s.type : [s.type ?? "any"];
  const kept = new Set([...KEPT.any, ...types.flatMap((t) => KEPT[String(t)] ?? [])]);
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(s)) if (kept.has(k)) out[k] = v;
  if (typeof s.format === "string" && !STRICT_FORMATS.has(s.format)) delete out.format;
  if (typeof out.format === "string") delete out.pattern;
  const description = withText(s.description, droppedAsText(s));
  if (description) out.description = description;
  else delete out.description;
  if (Array.isArray(s.anyOf)) out.anyOf = s.anyOf.map((b) => strictOf(b as JsonSchema));
  if (isObject(s.items)) out.items = strictOf(s.items);
  if (isObject(s.properties)) {
    const required = new Set((s.required as string[] | undefined) ?? []);
    out.properties = Object.fromEntries(
      Object.entries(s.properties).map(([name, p]) => {
        const strict = strictOf(p as JsonSchema);
        return [name, required.has(name) ? strict : nullable(strict)];
      }),
    );
    out.required = Object.keys(s.properties);
    out.additionalProperties = false;
  }
  return out;
}

/** The schema or null; the description stays on the outside, where a model reads it. */
function nullable(s: JsonSchema): JsonSchema {
  if (admitsNull(s)) return s;
  const { description, ...rest } = s;
  const branches = Array.isArray(rest.anyOf) && Object.keys(rest).length === 1 ? (rest.anyOf as JsonSchema[]) : [rest];
  return { anyOf: [...branches, { type: "null" }], ...(description ? { description } : {}) };
}

/** A map as a list of `{ key, value }` pairs, each key at most once. */
function pairsOf(s: JsonSchema): JsonSchema {
  const key = strictOf({ type: "string", ...(isObject(s.propertyNames) ? s.propertyNames : {}) });
  const value = strictOf(isObject(s.additionalProperties) ? s.additionalProperties : {});
  const said = 'Given as a list of { key, value } pairs, each key at most once: {"a": 1} is [{"key": "a", "value": 1}].';
  return {
    type: "array",
    items: { type: "object", properties: { key, value }, required: ["key", "value"], additionalProperties: false },
    description: withText(s.description, [said]),
  };
}

/** A tool's input JSON Schema in strict form: the same fields, every one required, optional ones nullable, maps as pairs. */
export function strictInputSchema(input: JsonSchema): JsonSchema {
  const { $defs, ...root } = input;
  const strict = strictOf(root);
  if (isObject($defs)) strict.$defs = Object.fromEntries(Object.entries($defs).map(([name, d]) => [name, strictOf(d as JsonSchema)]));
  return strict;
}

/**
 * Arguments shaped by the strict schema as the tool's own input: a null optional argument is left
 * out, a list of `{ key, value }` pairs given for a map becomes the object. Anything else passes as
 * it is, for the tool's schema to judge. `input` is the tool's input JSON Schema (not the strict one).
 * Read once per tool (`strictArgumentsReader`): a call's arguments that need neither change are
 * handed on as they are, without a copy.
 */
const DROP = Symbol("left out");

export function strictArgumentsReader(input: JsonSchema): (args: unknown) => unknown {
  if (!isObject(input.properties)) return (args) => args;
  const properties = input.properties as Record<string, JsonSchema>;
  const required = new Set((input.required as string[] | undefined) ?? []);
  /** What a given argument becomes: undefined when it passes as it is, `DROP` when it is left out. */
  const changeOf = (name: string, value: unknown): unknown => {
    const schema = properties[name];
    if (!schema) return undefined;
    if (value === null) return required.has(name) ? undefined : DROP;
    return isMapSchema(schema) && Array.isArray(value) ? objectOfPairs(name, value) : undefined;
  };
  return (args) => {
    if (!isObject(args)) return args;
    const names = Object.keys(args);
    let i = 0;
    // (`__proto__` as a key is no own property of the copy: it always takes the copy, as before.)
    while (i < names.length && names[i] !== "__proto__" && changeOf(names[i]!, args[names[i]!]) === undefined) i++;
    if (i === names.length) return args;
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const value = args[name];
      const changed = changeOf(name, value);
      if (changed !== DROP) out[name] = changed === undefined ? value : changed;
    }
    return out;
  };
}

function objectOfPairs(field: string, pairs: unknown[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  pairs.forEach((pair, i) => {
    const keys = isObject(pair) ? Object.keys(pair).sort() : [];
    if (!isObject(pair) || keys.length !== 2 || keys[0] !== "key" || keys[1] !== "value" || typeof pair.key !== "string") {
      throw badRequest(`invalid field '${field}[${i}]': must be an object with a string 'key' and a 'value'`, `${field}[${i}]`);
    }
    if (Object.hasOwn(object, pair.key)) throw badRequest(`invalid field '${field}[${i}]': repeats the key of an earlier pair`, `${field}[${i}]`);
    object[pair.key] = pair.value;
  });
  return object;
}
