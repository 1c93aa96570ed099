-- Foundation: problems, label vocabularies, append-only audit log, full-text index.

CREATE TABLE problems (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    entry_point TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('function', 'method')),
    stage TEXT NOT NULL DEFAULT '',
    task TEXT NOT NULL DEFAULT '',
    data TEXT NOT NULL DEFAULT '',
    framework TEXT NOT NULL DEFAULT 'pytorch',
    status TEXT NOT NULL DEFAULT 'draft'
        CHECK (status IN ('draft', 'ready', 'released', 'retired')),
    source TEXT,            -- JSON object ([source] table) or NULL
    test_node_ids TEXT,     -- JSON list ([tests] node_ids) or NULL
    prompt TEXT NOT NULL DEFAULT '',
    solution TEXT NOT NULL DEFAULT '',
    tests TEXT,             -- test_solution.py; NULL for repo-backed problems
    toml_raw TEXT,          -- problem.toml as last read, so dump can write it back byte for byte
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX problems_status ON problems (status);

CREATE TABLE labels (
    axis TEXT NOT NULL CHECK (axis IN ('stage', 'task', 'data')),
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    definition TEXT NOT NULL DEFAULT '',
    position INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (axis, slug)
);

CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    entity TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    action TEXT NOT NULL,
    field TEXT,
    before TEXT,
    after TEXT
);

CREATE INDEX audit_entity ON audit (entity, entity_id);

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE VIRTUAL TABLE problems_fts USING fts5(
    id UNINDEXED, title, prompt, solution, tests,
    content = 'problems', content_rowid = 'rowid', tokenize = 'unicode61'
);

CREATE TRIGGER problems_fts_insert AFTER INSERT ON problems
BEGIN
    INSERT INTO problems_fts (rowid, id, title, prompt, solution, tests)
    VALUES (new.rowid, new.id, new.title, new.prompt, new.solution, new.tests);
END;

CREATE TRIGGER problems_fts_delete AFTER DELETE ON problems
BEGIN
    INSERT INTO problems_fts (problems_fts, rowid, id, title, prompt, solution, tests)
    VALUES ('delete', old.rowid, old.id, old.title, old.prompt, old.solution, old.tests);
END;

CREATE TRIGGER problems_fts_update AFTER UPDATE OF title, prompt, solution, tests ON problems
BEGIN
    INSERT INTO problems_fts (problems_fts, rowid, id, title, prompt, solution, tests)
    VALUES ('delete', old.rowid, old.id, old.title, old.prompt, old.solution, old.tests);
    INSERT INTO problems_fts (rowid, id, title, prompt, solution, tests)
    VALUES (new.rowid, new.id, new.title, new.prompt, new.solution, new.tests);
END;
