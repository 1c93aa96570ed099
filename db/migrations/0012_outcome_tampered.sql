-- The runs table accepts every outcome of curator.execution.job.OUTCOMES, `tampered`
-- included (a solution that tried to change how it is judged).
--
-- SQLite cannot alter a CHECK constraint, and rebuilding the table here would have to
-- name every column other migrations add to it; so the constraint's text is edited in
-- place (the documented writable_schema procedure: the stored rows are unaffected), and
-- a throwaway table bumps the schema cookie so other open connections reload the schema.
-- A database whose CHECK already lists `tampered` is left as it is.
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''no_code'', ''infra'')', '''no_code'', ''tampered'', ''infra'')')
 WHERE type = 'table' AND name = 'runs' AND sql NOT LIKE '%''tampered''%';
PRAGMA writable_schema = RESET;
CREATE TABLE _schema_cookie_bump (x);
DROP TABLE _schema_cookie_bump;
