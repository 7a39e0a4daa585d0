// server/trpc/internals.ts reads tRPC's and zod's undocumented shapes (a router's procedure table,
// a procedure's _def, the middleware protocol, zod's _zod.def). Each is exercised here against the
// installed @trpc/server, zod and trpc-to-openapi on real routers and schemas, so an upgrade that
// changes one fails here, by name, rather than as a REST request that silently loses its input.
import { initTRPC, TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appRouter } from "../../server/http/router";
import { leadsRouter } from "../../server/leads/leads.router";
import { listLeadsInput } from "../../server/leads/leads.types";
import { agentRouter } from "../../server/tools/tools.router";
import {
  callProcedure,
  forEachOpenApiProcedureOf,
  numericFields,
  procedureInput,
  procedureMeta,
  procedureType,
  proceduresOf,
  unwrapZod,
  zodKind,
  zodObjectShape,
} from "../../server/trpc/internals";

describe("tRPC internals", () => {
  it("a_router_lists_its_procedures_flat_by_dotted_path_with_type_meta_and_input", () => {
    const procedures = proceduresOf(appRouter);
    expect(Object.keys(procedures)).toEqual(expect.arrayContaining(["leads.list", "leads.get", "leads.create"]));
    expect(procedures["leads.list"]).toBe(leadsRouter.list);
    expect(procedureType(procedures["leads.list"])).toBe("query");
    expect(procedureType(procedures["leads.create"])).toBe("mutation");
    expect(procedureMeta(procedures["leads.list"])).toMatchObject({ scope: "read", openapi: { method: "GET", path: "/leads" } });
    expect(procedureInput(procedures["leads.list"])).toBe(listLeadsInput);
    for (const [path, procedure] of Object.entries(procedures)) expect(["query", "mutation"], path).toContain(procedureType(procedure));
    expect(Object.keys(proceduresOf(agentRouter))).toEqual(expect.arrayContaining(["listTools", "upsert_lead"]));
  });

  it("trpc_to_openapi_lists_every_procedure_with_openapi_meta_by_path", () => {
    const seen: string[] = [];
    forEachOpenApiProcedureOf(appRouter, ({ path, procedure, meta }) => {
      expect(proceduresOf(appRouter)[path]).toBe(procedure);
      expect(meta.openapi.path.startsWith("/")).toBe(true);
      seen.push(`${meta.openapi.method} ${meta.openapi.path}`);
    });
    expect(seen).toEqual(expect.arrayContaining(["GET /leads", "GET /leads/{id}", "POST /leads"]));
    const tools: string[] = [];
    forEachOpenApiProcedureOf(agentRouter, ({ meta }) => tools.push(meta.openapi.path));
    expect(tools).toEqual(expect.arrayContaining(["/tools", "/tools/upsert_lead"]));
  });

  // A procedure built with the same calls the server's are: a context-adding middleware, one
  // reading the raw input, the input parser, the output parser, the resolver.
  type Ctx = { user: string };
  const t = initTRPC.context<Ctx>().meta<{ note: string }>().create();
  const seenRaw: unknown[] = [];
  const greet = t.procedure
    .meta({ note: "greets" })
    .use(({ next }) => next({ ctx: { greeting: "hello" } }))
    .use(async ({ getRawInput, next }) => {
      seenRaw.push(await getRawInput());
      return next({ getRawInput: async () => ({ name: String(((await getRawInput()) as { name: string }).name).toUpperCase() }) });
    })
    .input(z.object({ name: z.string().max(5) }))
    .output(z.object({ text: z.string() }))
    .mutation(({ ctx, input }) => ({ text: `${ctx.greeting} ${input.name} from ${ctx.user}` }));
  const call = (raw: unknown) =>
    callProcedure(greet, {
      ctx: { user: "ana" },
      type: "mutation",
      path: "greet",
      input: undefined,
      getRawInput: async () => raw,
      meta: procedureMeta(greet),
      signal: undefined,
      batchIndex: 0,
    });

  it("a_procedure_called_through_its_middlewares_answers_what_trpcs_own_caller_answers", async () => {
    expect(procedureMeta(greet)).toEqual({ note: "greets" });
    expect(procedureType(greet)).toBe("mutation");
    const answer = await call({ name: "bo" });
    expect(answer).toEqual({ text: "hello BO from ana" });
    const caller = t.createCallerFactory(t.router({ greet }))({ user: "ana" });
    expect(await caller.greet({ name: "bo" })).toEqual(answer);
    expect(seenRaw).toEqual([{ name: "bo" }, { name: "bo" }]);
  });

  it("trpc_marks_its_input_and_output_validators_and_keeps_their_schemas", () => {
    const def = (greet as unknown as { _def: { inputs: unknown[]; output: unknown; middlewares: { _type?: string }[] } })._def;
    expect(def.middlewares.map((m) => m._type ?? null)).toEqual([null, null, "input", "output", null]);
    expect(def.inputs).toHaveLength(1);
    expect(def.output).toBeInstanceOf(z.ZodType);
  });

  // callProcedure validates with zod's synchronous parse (internals.ts, chainOf): an answer that
  // breaks its output schema is still refused, and fields the schema does not declare still never leave.
  const answers = (data: unknown) =>
    t.procedure
      .input(z.object({ name: z.string() }))
      .output(z.object({ text: z.string() }))
      .query(() => data as { text: string });
  const callWith = (procedure: ReturnType<typeof answers>, raw: unknown) =>
    callProcedure(procedure, {
      ctx: { user: "ana" },
      type: "query",
      path: "answers",
      input: undefined,
      getRawInput: async () => raw,
      meta: undefined,
      signal: undefined,
      batchIndex: 0,
    });

  it("an_answer_breaking_its_output_schema_is_refused_and_undeclared_fields_never_leave", async () => {
    const refused = await callWith(answers({ text: 42 }), { name: "a" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TRPCError);
    expect((refused as TRPCError).code).toBe("INTERNAL_SERVER_ERROR");
    expect((refused as TRPCError).message).toBe("Output validation failed");
    expect((refused as TRPCError).cause).toBeInstanceOf(z.ZodError);
    expect(await callWith(answers({ text: "ok", secret: "s3cret" }), { name: "a" })).toEqual({ text: "ok" });
  });

  it("a_schema_with_an_async_refinement_is_still_checked", async () => {
    const asyncName = t.procedure
      .input(z.object({ name: z.string().refine(async (name) => name !== "taken", "is taken") }))
      .query(({ input }) => ({ text: input.name }));
    expect(await callWith(asyncName as unknown as ReturnType<typeof answers>, { name: "free" })).toEqual({ text: "free" });
    const refused = await callWith(asyncName as unknown as ReturnType<typeof answers>, { name: "taken" }).catch((e: unknown) => e);
    expect((refused as TRPCError).code).toBe("BAD_REQUEST");
    expect(((refused as TRPCError).cause as z.ZodError).issues[0].message).toBe("is taken");
  });

  it("a_failure_in_the_chain_is_thrown_as_a_trpc_error_carrying_its_cause", async () => {
    const refused = await call({ name: "too long" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TRPCError);
    expect((refused as TRPCError).code).toBe("BAD_REQUEST");
    expect((refused as TRPCError).cause).toBeInstanceOf(z.ZodError);
    expect(((refused as TRPCError).cause as z.ZodError).issues[0].path).toEqual(["name"]);
  });
});

describe("zod internals", () => {
  it("a_schema_says_its_kind_its_wrapped_schema_and_an_objects_fields", () => {
    const n = z.number();
    expect(zodKind(n)).toBe("number");
    expect(zodKind(z.string())).toBe("string");
    expect(zodKind(z.object({}))).toBe("object");
    expect(zodKind(n.optional())).toBe("optional");
    expect(unwrapZod(n.optional().nullable().default(1))).toBe(n);
    expect(unwrapZod(n.prefault(2))).toBe(n);
    expect(unwrapZod(n)).toBe(n);
    expect(zodKind(undefined)).toBeUndefined();
    const shape = { a: n, b: z.string() };
    expect(zodObjectShape(z.object(shape))).toEqual(shape);
    expect(zodObjectShape(z.strictObject(shape))).toEqual(shape);
    expect(zodObjectShape(n)).toBeUndefined();
  });

  it("numeric_fields_of_a_query_input_are_found_under_their_wrappers", () => {
    expect(numericFields(z.object({ limit: z.number().int().optional(), q: z.string().optional(), n: z.number().nullable().default(3) }))).toEqual([
      "limit",
      "n",
    ]);
    expect(numericFields(listLeadsInput)).toEqual(expect.arrayContaining(["limit", "stale_for_days"]));
    expect(numericFields(z.string())).toEqual([]);
  });
});
