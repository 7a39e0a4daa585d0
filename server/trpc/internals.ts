// The one place that reads tRPC's and zod's internal shapes: a router's flat table of procedures
// (`router._def.procedures`), a procedure's type, meta, input parsers and middlewares
// (`procedure._def`), the protocol its middlewares are called with, and a zod schema's kind, shape
// and wrapped schema (`schema._zod.def`). None of these is a documented API, so a minor upgrade may
// change them; tests/trpc/internals_keep_their_shape.test.ts exercises each against the installed
// @trpc/server, zod and trpc-to-openapi, and fails if one changed. Everything else goes through here.
import { type AnyRouter, getTRPCErrorFromUnknown } from "@trpc/server";
import { forEachOpenApiProcedure, type OpenApiMeta, type OpenApiProcedure, type OpenApiProcedureRecord } from "trpc-to-openapi";
import type { ProcedureMeta } from "./trpc";

/** A procedure as the router's table holds it (what tRPC calls AnyProcedure, as trpc-to-openapi types it). */
export type Procedure = OpenApiProcedure;

type ProcedureDef = { type: string; meta?: unknown; inputs: unknown[]; middlewares: ProcedureMiddleware[] };
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
  const result = await runMiddleware(defOf(procedure).middlewares, 0, call as MiddlewareCall<object>);
  if (!result.ok) throw result.error;
  return result.data;
}

async function runMiddleware(middlewares: ProcedureMiddleware[], index: number, call: MiddlewareCall<object>): Promise<MiddlewareResult> {
  try {
    const next = (opts?: NextOptions) =>
      runMiddleware(
        middlewares,
        index + 1,
        opts
          ? {
              ...call,
              ctx: opts.ctx ? { ...call.ctx, ...opts.ctx } : call.ctx,
              input: "input" in opts ? opts.input : call.input,
              getRawInput: opts.getRawInput ?? call.getRawInput,
            }
          : call,
      );
    return await middlewares[index]({ ...call, next });
  } catch (cause) {
    return { ok: false, error: getTRPCErrorFromUnknown(cause) };
  }
}

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
