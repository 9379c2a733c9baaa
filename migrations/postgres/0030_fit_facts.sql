-- A fit's facts: what the agent said of the workload's run that the server only keeps, reads
-- back and exports (the build it ran, the control measured beside it), as one JSON object
-- (`slopewatch_core::wire::Facts`; `{}` without any), so that a wire field of that kind needs no
-- column of its own. The two columns they were kept in are folded into it, leaving out the ones
-- that were NULL.
ALTER TABLE fits ADD COLUMN facts TEXT NOT NULL DEFAULT '{}';
UPDATE fits SET facts = jsonb_strip_nulls(jsonb_build_object('build_hash', build_hash, 'control', control::jsonb))::text
    WHERE build_hash IS NOT NULL OR control IS NOT NULL;
ALTER TABLE fits DROP COLUMN build_hash, DROP COLUMN control;
