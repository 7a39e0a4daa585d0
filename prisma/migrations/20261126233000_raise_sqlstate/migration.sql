-- Raises an error with the given SQLSTATE and message: lets one SQL statement abandon all it wrote
-- when it finds, only after writing, that it must not have (the ingest statement, when the message it
-- created a conversation for turns out to be stored already; server/conversations/ingest.ts).
-- Hand-written, as Prisma does not model functions. VOLATILE, so the planner never evaluates it early.
CREATE FUNCTION raise_sqlstate(p_code TEXT, p_message TEXT) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = p_code, MESSAGE = p_message;
END
$$;
