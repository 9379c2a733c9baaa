-- Periodic work that one server of several (replicas on one database) does for all of them, such
-- as the retention pass: the server that claims a task's period runs it, the others skip it. A
-- claim is taken by one statement that only succeeds once the last claim is a period old.
CREATE TABLE task_claims (
    task       TEXT PRIMARY KEY,
    -- Who claimed it last: host name and process id, for people reading the table.
    holder     TEXT NOT NULL,
    claimed_at TIMESTAMPTZ NOT NULL
);
