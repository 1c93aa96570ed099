-- Two `samples eval` processes on one workspace split the work: each claims the samples
-- it will run (INSERT OR IGNORE: the first claim wins); a claim of a dead process is
-- stale and can be taken over. Claims are removed once the run is recorded.
CREATE TABLE sample_claims (
    sample_id INTEGER PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,
    owner TEXT NOT NULL,        -- host:pid:token of the evaluating process
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    claimed_at TEXT NOT NULL
);

CREATE INDEX sample_claims_owner ON sample_claims (owner);
