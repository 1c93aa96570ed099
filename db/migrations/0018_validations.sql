-- Validity of a problem's tests (`curator validate`): does a stub of the entry point fail
-- them, is the reference stable across repeats, how many mutants of it do they kill.
-- One row per problem and solution: a problem whose solution and tests are unchanged is
-- not validated again.
CREATE TABLE validations (
    problem_id TEXT NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    solution_hash TEXT NOT NULL,        -- the reference text validated
    tests_hash TEXT NOT NULL,           -- tests text, node ids, entry point, left-out tests
    mutants_asked INTEGER NOT NULL,     -- --mutants N
    repeat INTEGER NOT NULL,            -- --repeat K
    discriminates INTEGER,              -- NULL: no passing reference (see result.reason)
    stable INTEGER,
    mutation_score REAL,                -- NULL: no mutant counted
    result TEXT NOT NULL,               -- JSON: every figure, survivors with their lines
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    PRIMARY KEY (problem_id, solution_hash)
);
