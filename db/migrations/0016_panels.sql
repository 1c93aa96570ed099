-- Panels: several annotators vote a problem's stage/task/data blind, the majority decides
-- (ties are adjudicated); several reviewers vote a mined candidate relevant or not, and a
-- rule (curator.toml [candidates] accept_when) promotes or rejects it.
-- Every vote and decision is also in the audit log (who, when, before and after).

-- Which annotator labels which problem, and on which dimensions (a label round).
CREATE TABLE label_assignments (
    problem_id TEXT NOT NULL REFERENCES problems(id),
    annotator TEXT NOT NULL,
    dimensions TEXT NOT NULL DEFAULT 'stage,task,data',   -- comma-separated axes to vote
    assigned_at TEXT NOT NULL,
    assigned_by TEXT NOT NULL,
    PRIMARY KEY (problem_id, annotator)
);

CREATE INDEX label_assignments_annotator ON label_assignments (annotator);

-- One current vote per (problem, annotator); an axis not voted is NULL.
CREATE TABLE label_votes (
    problem_id TEXT NOT NULL REFERENCES problems(id),
    annotator TEXT NOT NULL,
    stage TEXT,
    task TEXT,
    data TEXT,
    note TEXT NOT NULL DEFAULT '',
    voted_at TEXT NOT NULL,
    PRIMARY KEY (problem_id, annotator)
);

-- How a problem's label on one axis was decided by its panel.
CREATE TABLE label_decisions (
    problem_id TEXT NOT NULL REFERENCES problems(id),
    axis TEXT NOT NULL CHECK (axis IN ('stage', 'task', 'data')),
    value TEXT NOT NULL,
    method TEXT NOT NULL CHECK (method IN ('single', 'majority', 'adjudicated')),
    votes INTEGER NOT NULL,       -- votes for the value (majority k of n)
    of INTEGER NOT NULL,          -- votes cast on this axis
    decided_by TEXT NOT NULL,
    decided_at TEXT NOT NULL,
    PRIMARY KEY (problem_id, axis)
);

-- Which reviewer votes on which mined candidate.
CREATE TABLE candidate_assignments (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    reviewer TEXT NOT NULL,
    assigned_at TEXT NOT NULL,
    assigned_by TEXT NOT NULL,
    PRIMARY KEY (candidate_id, reviewer)
);

CREATE INDEX candidate_assignments_reviewer ON candidate_assignments (reviewer);

-- One current relevance vote per (candidate, reviewer).
CREATE TABLE candidate_votes (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    reviewer TEXT NOT NULL,
    relevant INTEGER NOT NULL CHECK (relevant IN (0, 1)),
    reason TEXT NOT NULL DEFAULT '',
    voted_at TEXT NOT NULL,
    PRIMARY KEY (candidate_id, reviewer)
);
