// search_offerings: what an assistant looks up while talking to a customer. PostgreSQL full text
// over the titles and descriptions (Arabic and English alike: the 'simple' configuration lower-cases
// and splits words without language stemming), exact attribute filters, active offerings only,
// best matches first. One prepared statement per shape, answering wire-shaped rows like the list.
import { z } from "zod";
import { modelColumns, TABLE } from "../db/columns";
import { Prisma } from "../db/generated/client";
import type { TenantSql } from "../db/tenant-scope";
import { unknownFieldMessage } from "../lib/strict-body";
import type { Offering } from "./offerings.types";
import { OFFERING_WIRE_SELECT } from "./offerings.service";

const MAX_SEARCH_RESULTS = 10;
const DEFAULT_SEARCH_RESULTS = 5;
const MAX_QUERY_WORDS = 16;
const MAX_FILTERS = 20;

const limitMessage = `must be an integer from 1 to ${MAX_SEARCH_RESULTS}`;
const filterValue = z.union([z.string().max(500), z.number(), z.boolean()], {
  error: "each filter value must be a string, a number or a boolean",
});

export const searchOfferingsInput = z.strictObject(
  {
    query: z
      .string()
      .max(200)
      .optional()
      .describe(
        "Words to look for in the offering's title, Arabic title and descriptions, in any case; every word must match, and the last one may be the start of a word ('apart' finds 'apartment'). Omit (or leave empty) to list the newest active offerings.",
      ),
    attributes: z
      .record(z.string().min(1).max(100), filterValue)
      .refine((filters) => Object.keys(filters).length <= MAX_FILTERS, { message: `at most ${MAX_FILTERS} filters` })
      .optional()
      .describe('Exact matches on the offering\'s attributes, e.g. {"bedrooms": 2, "furnished": true}'),
    limit: z
      .number({ error: limitMessage })
      .int({ message: limitMessage })
      .min(1, { message: limitMessage })
      .max(MAX_SEARCH_RESULTS, { message: limitMessage })
      .optional()
      .describe(`How many offerings to return, 1 to ${MAX_SEARCH_RESULTS} (default ${DEFAULT_SEARCH_RESULTS})`),
  },
  unknownFieldMessage(),
);
export type SearchOfferingsInput = z.infer<typeof searchOfferingsInput>;

// Column names come from the model (server/db/columns.ts).
const OFFERING = modelColumns(Prisma.OfferingScalarFieldEnum);

// `search_vector` is the titles (weight A) and descriptions (weight B) as a tsvector, generated and
// stored by PostgreSQL and GIN-indexed (migration `offerings_search_vector`): matching uses the
// index, and ranking reads the stored vector instead of re-parsing every match's text. Being
// PostgreSQL's own column, outside the Prisma model, it is the one column named by hand.
// `::text::jsonb`: typed text, the JSON goes as written (a jsonb parameter would be JSON-encoded again by postgres.js).
const ACTIVE = `t.${OFFERING.tenantId} = $1::uuid AND t.${OFFERING.status} = 'active' AND t.${OFFERING.deletedAt} IS NULL AND t.${OFFERING.attributes} @> $2::text::jsonb`;

// The tsquery comes from FROM, parsed once per execution: once the prepared statement runs on its
// generic plan (after five executions), a `to_tsquery('simple', $4)` written in ORDER BY is no
// longer a folded constant and is parsed again for every matching row (31 ms instead of 2.4 ms
// for a word matching 2,000 of 10,000 offerings, EXPLAIN ANALYZE; docs/assistant-tools.md).
export const MATCHING = {
  text: `SELECT ${OFFERING_WIRE_SELECT} FROM to_tsquery('simple', $4) AS q, ${TABLE.Offering} t
    WHERE ${ACTIVE} AND t.search_vector @@ q
    ORDER BY ts_rank(t.search_vector, q) DESC, t.${OFFERING.createdAt} DESC, t.${OFFERING.id} DESC
    LIMIT $3`,
};
export const NEWEST = {
  text: `SELECT ${OFFERING_WIRE_SELECT} FROM ${TABLE.Offering} t WHERE ${ACTIVE} ORDER BY t.${OFFERING.createdAt} DESC, t.${OFFERING.id} DESC LIMIT $3`,
};

/**
 * The words of `text` as a tsquery: every word required, the last one also as a prefix. Words are
 * runs of letters, marks and digits only, so nothing in the text can act as tsquery syntax.
 * Null when the text has no word at all.
 */
export function toPrefixQuery(text: string): string | null {
  const words = (
    text
      .normalize("NFC")
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}]+/gu) ?? []
  )
    .filter((word) => /[\p{L}\p{N}]/u.test(word))
    .slice(0, MAX_QUERY_WORDS);
  if (!words.length) return null;
  return words.map((word, i) => (i === words.length - 1 ? `'${word}':*` : `'${word}'`)).join(" & ");
}

/** The tenant's active offerings matching `input`, best first (rank, then newest), at most `limit`. */
export async function searchOfferings(sql: TenantSql, input: SearchOfferingsInput): Promise<{ data: Offering[] }> {
  const limit = input.limit ?? DEFAULT_SEARCH_RESULTS;
  const filters = JSON.stringify(input.attributes ?? {});
  const text = input.query?.trim() ?? "";
  const query = text ? toPrefixQuery(text) : null;
  // Text without a single word (only punctuation, say) matches nothing rather than everything.
  if (text && query === null) return { data: [] };
  const rows = query === null ? await sql<Offering>(NEWEST, [filters, limit]) : await sql<Offering>(MATCHING, [filters, limit, query]);
  return { data: rows };
}
