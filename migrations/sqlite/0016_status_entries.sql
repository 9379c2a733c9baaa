-- The status an editor's timeline entry set, as a value beside its wording: the export carries
-- editors' status changes to another store and reads them from here, never out of the text.
-- Entries written before this migration are marked once, by the wording the server gave them.
ALTER TABLE regression_events ADD COLUMN status TEXT
    CHECK (status IN ('open', 'acknowledged', 'fixed', 'false_alarm'));
UPDATE regression_events SET status = 'acknowledged' WHERE kind = 'acknowledged' AND detail = 'Acknowledged';
UPDATE regression_events SET status = 'open' WHERE kind = 'status' AND detail = 'Status set to open';
UPDATE regression_events SET status = 'fixed' WHERE kind = 'status' AND detail = 'Status set to fixed';
UPDATE regression_events SET status = 'false_alarm' WHERE kind = 'status' AND detail = 'Status set to false alarm';
