-- search_offerings ranks by ts_rank over the matching rows: computed from the text on every query,
-- that re-parses each match's titles and descriptions (tens of milliseconds for a broad word over
-- thousands of offerings). PostgreSQL keeps the vector instead, as a generated column (Prisma models
-- it as Unsupported("tsvector") with a database-generated default, so its diff stays quiet).
-- Titles weigh A and descriptions B: a word in a title ranks above one in a description.
ALTER TABLE "offerings" ADD COLUMN "search_vector" tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple', coalesce("title", '') || ' ' || coalesce("title_ar", '')), 'A')
  || setweight(to_tsvector('simple', coalesce("description", '') || ' ' || coalesce("description_ar", '')), 'B')
) STORED;

-- CreateIndex
CREATE INDEX "offerings_search_vector_idx" ON "offerings" USING GIN ("search_vector");

-- The expression index it replaces (migration assistant_tools).
DROP INDEX "offerings_search_idx";
