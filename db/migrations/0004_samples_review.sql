-- LLM samples, the generation cache, the bug taxonomy (versioned) and failure review.
-- Run outcomes of samples live in `runs` (migration 0002) with runs.sample_id = samples.id.

CREATE TABLE samples (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    problem_id TEXT NOT NULL REFERENCES problems(id),
    model TEXT NOT NULL,
    technique TEXT NOT NULL DEFAULT '',
    temperature REAL,
    sample_index INTEGER NOT NULL DEFAULT 0,
    format TEXT NOT NULL
        CHECK (format IN ('solution', 'completion', 'response', 'dlbench')),
    raw TEXT NOT NULL,          -- the text as given (solution, completion or raw response)
    code TEXT,                  -- the code to run; NULL when none could be extracted
    extraction TEXT NOT NULL,   -- how `code` was obtained (see curator/evaluation/extract.py)
    code_sha256 TEXT,
    content_hash TEXT NOT NULL UNIQUE,  -- identity across machines and re-imports
    origin TEXT,                -- file:line it came from, or generate:<cache key>
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL
);

CREATE INDEX samples_problem ON samples (problem_id);
CREATE INDEX samples_model ON samples (model, technique);

-- Raw chat-completions responses, so a prompt is never paid for twice.
CREATE TABLE generation_cache (
    model TEXT NOT NULL,
    technique TEXT NOT NULL,
    temperature REAL NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    problem_id TEXT,
    request TEXT NOT NULL,      -- JSON body sent
    response TEXT NOT NULL,     -- JSON body received
    text TEXT NOT NULL,         -- choices[0].message.content
    created_at TEXT NOT NULL,
    PRIMARY KEY (model, technique, temperature, prompt_sha256, sample_index)
);

-- Every version of the bug taxonomy ever used; the highest version is current.
CREATE TABLE taxonomy_versions (
    version INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL,
    body TEXT NOT NULL,         -- the taxonomy JSON document
    source TEXT,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL
);

CREATE TABLE review_assignments (
    sample_id INTEGER NOT NULL REFERENCES samples(id),
    annotator TEXT NOT NULL,
    overlap INTEGER NOT NULL DEFAULT 0,   -- 1 when the item is deliberately double-labelled
    assigned_at TEXT NOT NULL,
    assigned_by TEXT NOT NULL,
    PRIMARY KEY (sample_id, annotator)
);

CREATE INDEX review_assignments_annotator ON review_assignments (annotator);

-- One current label per (sample, annotator); its history is in the audit log.
CREATE TABLE review_labels (
    sample_id INTEGER NOT NULL REFERENCES samples(id),
    annotator TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('bug', 'sample-correct', 'benchmark-defect')),
    pairs TEXT NOT NULL DEFAULT '[]',     -- JSON [{"category", "dl", "reason"}], 1-2 for bugs
    note TEXT NOT NULL DEFAULT '',        -- free text, e.g. why a verdict was given
    taxonomy_version INTEGER,
    labelled_at TEXT NOT NULL,
    PRIMARY KEY (sample_id, annotator)
);

-- The adjudicated (final) label of a sample.
CREATE TABLE review_final (
    sample_id INTEGER PRIMARY KEY REFERENCES samples(id),
    verdict TEXT NOT NULL CHECK (verdict IN ('bug', 'sample-correct', 'benchmark-defect')),
    pairs TEXT NOT NULL DEFAULT '[]',
    taxonomy_version INTEGER,
    adjudicator TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    labelled_at TEXT NOT NULL
);
