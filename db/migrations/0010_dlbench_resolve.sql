-- DL-Bench resolution and outcomes judged elsewhere.

-- Where the repository cache was cloned from when that is not `url` (a local clone or a
-- bare mirror registered by `curator dlbench resolve --repo NAME=SOURCE`), and the date
-- its commit was pinned as of (`--as-of`), so its environment can be resolved as of then.
ALTER TABLE repos ADD COLUMN source TEXT;
ALTER TABLE repos ADD COLUMN as_of TEXT;

-- What `dlbench resolve` found for an imported problem: JSON {"repo", "commit", "path",
-- "symbol", "dropped_tests"} when resolved, {"reason"} when not ('{}' = never tried).
ALTER TABLE problem_imports ADD COLUMN resolution TEXT NOT NULL DEFAULT '{}';

-- A run whose outcome was judged somewhere else (for instance DL-Bench's own test reports,
-- `samples import --format dlbench-taxonomy`): the name of that source. NULL = run here.
ALTER TABLE runs ADD COLUMN external TEXT;
