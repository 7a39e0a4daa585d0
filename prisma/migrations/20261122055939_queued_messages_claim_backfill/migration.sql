-- Outbound messages left `queued` by a send interrupted before messages had a sender's claim: give
-- them the claim such a send would have had (2 minutes from creation), so the recovery sweep ends
-- them like any other interrupted send (sent again if recent, `failed` if over an hour old).
UPDATE "messages" SET "send_claimed_until" = "created_at" + interval '2 minutes'
WHERE "status" = 'queued' AND "direction" = 'outbound' AND "send_claimed_until" IS NULL;
