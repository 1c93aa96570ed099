-- Model-assisted curation: suggested review categories and drafted prompts.
--
-- review_suggestions: the latest suggestions shown for a failing sample (JSON list of
-- {"category", "dl", "evidence", "source"}, best first) and where they came from
-- ("rules", or "model:NAME:TEMPLATE_HASH"). Never labels.
CREATE TABLE review_suggestions (
    sample_id INTEGER PRIMARY KEY REFERENCES samples(id),
    suggestions TEXT NOT NULL DEFAULT '[]',
    source TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- review_suggestion_uses: per (sample, annotator), whether the label saved took the first
-- suggestion (accepted) or something else (overridden); `by_key` when it came from the
-- accept key. `shown` is the JSON list of suggested category ids.
CREATE TABLE review_suggestion_uses (
    sample_id INTEGER NOT NULL REFERENCES samples(id),
    annotator TEXT NOT NULL,
    first TEXT NOT NULL,
    shown TEXT NOT NULL DEFAULT '[]',
    chosen TEXT NOT NULL,
    accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),
    by_key INTEGER NOT NULL DEFAULT 0 CHECK (by_key IN (0, 1)),
    decided_at TEXT NOT NULL,
    PRIMARY KEY (sample_id, annotator)
);

-- prompt_drafts: drafts of a problem's prompt beside the one in prompt.md: the docstring
-- draft ("docstring") and drafts written by a model ("model:NAME"), with the hash of the
-- request template that produced them. The annotator picks one and edits it.
CREATE TABLE prompt_drafts (
    problem_id TEXT NOT NULL REFERENCES problems(id),
    source TEXT NOT NULL,
    model TEXT,
    template_sha256 TEXT,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    PRIMARY KEY (problem_id, source)
);
