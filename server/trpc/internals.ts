// The one place that reads tRPC's and zod's internal shapes: a router's flat table of procedures
// (`router._def.procedures`), a procedure's type, meta, input parsers and middlewares
// (`procedure._def`), the protocol its middlewares are called with, and a zod schema's kind, shape
// and wrapped schema (`schema._zod.def`). None of these is a documented API, so a minor upgrade may
// change them; tests/trpc/internals_keep_their_shape.test.ts exercises each against the installed
// @trpc/server, zod and trpc-to-openapi, and fails if one changed. Everything else goes through here.
import { type AnyRouter, getTRPCErrorFromUnknown, TRPCError } from "@trpc/server";
import { z } from "zod";
import { forEachOpenApiProcedure, type OpenApiMeta, type OpenApiProcedure, type OpenApiProcedureRecord } from "trpc-to-openapi";
import type { ProcedureMeta } from "./trpc";

/** A procedure as the router's table holds it (what tRPC calls AnyProcedure, as trpc-to-openapi types it). */
export type Procedure = OpenApiProcedure;

type ProcedureDef = { type: string; meta?: unknown; inputs: unknown[]; output?: unknown; middlewares: ProcedureMiddleware[] };
const defOf = (procedure: Procedure) => (procedure as unknown as { _def: ProcedureDef })._def;

/** Every procedure of `router` by its dotted path (`leads.list`), nested routers flattened. */
export function proceduresOf(router: AnyRouter): Readonly<Record<string, Procedure>> {
  return router._def.procedures as Record<string, Procedure>;
}

/** `query`, `mutation` or `subscription`. */
export const procedureType = (procedure: Procedure): string => defOf(procedure).type;
export const procedureMeta = (procedure: Procedure): ProcedureMeta | undefined => defOf(procedure).meta as ProcedureMeta | undefined;
/** The schema given to `.input()` (the first, if several were chained). */
export const procedureInput = (procedure: Procedure): unknown => defOf(procedure).inputs[0];

/** Calls `callback` for each procedure of `router` with `openapi` meta, as trpc-to-openapi lists them. */
export function forEachOpenApiProcedureOf(
  router: AnyRouter,
  callback: (values: { path: string; procedure: Procedure; meta: ProcedureMeta & { openapi: NonNullable<OpenApiMeta["openapi"]> } }) => void,
): void {
  forEachOpenApiProcedure<ProcedureMeta>(proceduresOf(router) as unknown as OpenApiProcedureRecord, callback);
}

// --- Calling a procedure's middleware chain ---------------------------------------------------------

/** What a procedure's middlewares (its `.use()`s, the input and output parsers, the resolver) are called with. */
export type MiddlewareCall<Ctx = unknown> = {
  ctx: Ctx;
  type: string;
  path: string;
  input: unknown;
  getRawInput: () => Promise<unknown>;
  meta: unknown;
  signal: AbortSignal | undefined;
  batchIndex: number;
};
type NextOptions = { ctx?: object; input?: unknown; getRawInput?: () => Promise<unknown> };
type MiddlewareResult = { ok: true; data: unknown } | { ok: false; error: unknown };
type ProcedureMiddleware = (call: MiddlewareCall & { next: (opts?: NextOptions) => Promise<MiddlewareResult> }) => Promise<MiddlewareResult>;

/**
 * Calls a procedure as tRPC's own caller does — its middlewares in order, each `next` merging the
 * context, input and raw-input reader it is given, a throw becoming a failed result, the failure
 * thrown at the end — with plain object spreads: tRPC's caller copies its options through a
 * transpiled spread helper at every step, about a twentieth of a list request's CPU on the lean front.
 */
export async function callProcedure<Ctx extends object>(procedure: Procedure, call: MiddlewareCall<Ctx>): Promise<unknown> {
  const result = await runMiddleware(chainOf(defOf(procedure)), 0, call as MiddlewareCall<object>);
  if (!result.ok) throw result.error;
  return result.data;
}

/**
 * A procedure's middlewares as tRPC built them, except its zod input and output validators (tRPC
 * marks them `_type` "input" and "output"), which become the same checks with zod's synchronous
 * `parse`: tRPC calls `parseAsync`, whose promise per schema node cost about a tenth of a tool
 * call's CPU. The same errors (BAD_REQUEST, or "Output validation failed", with the ZodError as
 * cause), the same input merge; a schema with async refinements still goes through `parseAsync`.
 * Built once per procedure.
 */
const chains = new WeakMap<ProcedureDef, ProcedureMiddleware[]>();
function chainOf(def: ProcedureDef): ProcedureMiddleware[] {
  let chain = chains.get(def);
  if (chain) return chain;
  const typeOf = (middleware: ProcedureMiddleware) => (middleware as { _type?: string })._type;
  const inputMiddlewares = def.middlewares.filter((m) => typeOf(m) === "input").length;
  const outputMiddlewares = def.middlewares.filter((m) => typeOf(m) === "output").length;
  let nthInput = 0;
  chain = def.middlewares.map((middleware) => {
    const type = typeOf(middleware);
    // The k-th input middleware validates `inputs[k]`: only when the counts say so unambiguously.
    if (type === "input" && inputMiddlewares === def.inputs.length) {
      const schema = def.inputs[nthInput++];
      return schema instanceof z.ZodType ? inputValidator(schema) : middleware;
    }
    if (type === "output" && outputMiddlewares === 1 && def.output instanceof z.ZodType) return outputValidator(def.output);
    return middleware;
  });
  chains.set(def, chain);
  return chain;
}

/** zod's synchronous parse, or its async one for a schema that needs it (an async refinement or transform). */
function zodParse(schema: z.ZodType, value: unknown): unknown {
  try {
    return schema.parse(value);
  } catch (err) {
    if (err instanceof z.core.$ZodAsyncError) return schema.parseAsync(value);
    throw err;
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => !!value && !Array.isArray(value) && typeof value === "object";

/** tRPC's inputValidatorMiddleware (createInputMiddleware), with zodParse. */
function inputValidator(schema: z.ZodType): ProcedureMiddleware {
  return async (opts) => {
    const rawInput = await opts.getRawInput();
    let parsed: unknown;
    try {
      parsed = zodParse(schema, rawInput);
      if (parsed instanceof Promise) parsed = await parsed;
    } catch (cause) {
      throw new TRPCError({ code: "BAD_REQUEST", cause });
    }
    return opts.next({ input: isPlainObject(opts.input) && isPlainObject(parsed) ? { ...opts.input, ...parsed } : parsed });
  };
}

/** tRPC's outputValidatorMiddleware (createOutputMiddleware), with zodParse: an answer that fails its schema never leaves. */
function outputValidator(schema: z.ZodType): ProcedureMiddleware {
  return async ({ next }) => {
    const result = await next();
    if (!result.ok) return result;
    try {
      const data = zodParse(schema, result.data);
      return { ...result, data: data instanceof Promise ? await data : data };
    } catch (cause) {
      throw new TRPCError({ message: "Output validation failed", code: "INTERNAL_SERVER_ERROR", cause });
    }
  };
}

/** A middleware's throw (or rejection) as tRPC's failed result. */
const failedResult = (cause: unknown): MiddlewareResult => ({ ok: false, error: getTRPCErrorFromUnknown(cause) });

function runMiddleware(middlewares: ProcedureMiddleware[], index: number, call: MiddlewareCall<object>): Promise<MiddlewareResult> {
  const next = (opts?: NextOptions) =>
    runMiddleware(
      middlewares,
      index + 1,
      opts
        ? callWith(call, opts.ctx ? { ...call.ctx, ...opts.ctx } : call.ctx, "input" in opts ? opts.input : call.input, opts.getRawInput ?? call.getRawInput)
        : call,
    );
  let result: Promise<MiddlewareResult>;
  try {
    // Object literals of one fixed shape (not spreads): every middleware's reads of them stay monomorphic.
    result = middlewares[index]({
      ctx: call.ctx,
      type: call.type,
      path: call.path,
      input: call.input,
      getRawInput: call.getRawInput,
      meta: call.meta,
      signal: call.signal,
      batchIndex: call.batchIndex,
      next,
    });
  } catch (cause) {
    return Promise.resolve(failedResult(cause));
  }
  // A promise's rejection becomes the failed result too (no async function per step: one promise fewer).
  return Promise.resolve(result).then(undefined, failedResult);
}

const callWith = (call: MiddlewareCall<object>, ctx: object, input: unknown, getRawInput: () => Promise<unknown>): MiddlewareCall<object> => ({
  ctx,
  type: call.type,
  path: call.path,
  input,
  getRawInput,
  meta: call.meta,
  signal: call.signal,
  batchIndex: call.batchIndex,
});

// --- zod schemas ------------------------------------------------------------------------------------

type ZodDef = { type: string; innerType?: unknown; shape?: Record<string, unknown> };
const zodDefOf = (schema: unknown): ZodDef | undefined => (schema as { _zod?: { def?: ZodDef } } | undefined)?._zod?.def;
const WRAPPERS = ["optional", "nullable", "default", "prefault"];

/** The kind of a zod schema (`number`, `string`, `object`, `optional`, …), or undefined for anything else. */
export const zodKind = (schema: unknown): string | undefined => zodDefOf(schema)?.type;

/** The schema inside `.optional()`, `.nullable()`, `.default()` and `.prefault()` wrappers. */
export function unwrapZod(schema: unknown): unknown {
  let s = schema;
  for (let def = zodDefOf(s); def && WRAPPERS.includes(def.type); def = zodDefOf(s)) s = def.innerType;
  return s;
}

/** An object schema's fields (undefined for any other schema). */
export const zodObjectShape = (schema: unknown): Readonly<Record<string, unknown>> | undefined => zodDefOf(schema)?.shape;

/** The fields of an object schema whose value, unwrapped, is a number (a query string's numbers are converted for them). */
export function numericFields(schema: unknown): string[] {
  return Object.entries(zodObjectShape(schema) ?? {})
    .filter(([, field]) => zodKind(unwrapZod(field)) === "number")
    .map(([key]) => key);
}
