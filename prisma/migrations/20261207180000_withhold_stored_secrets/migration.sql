-- Stored Idempotency-Key answers of POST /webhook-endpoints and /webhook-endpoints/{id}/roll-secret
-- held the endpoint's signing secret in plain text for their 24 hours. Such answers are now stored
-- sealed (server/idempotency/); this takes the secret out of the ones stored before. A repeat of one
-- is answered 409 (no answer of those endpoints stored unsealed is replayed), never the secret.
-- Hand-written: a change of data, not of the schema.
UPDATE "idempotent_responses"
SET "body" = regexp_replace("body", '"secret":"whsec_[^"]*"', '"secret":null', 'g')
WHERE "body" LIKE '%"secret":"whsec\_%';
