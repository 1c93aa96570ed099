-- Releases: every bundle built, which problems went in (at which content), and where
-- imported problems came from (DL-Bench files, our own bundles).

CREATE TABLE releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    archive_sha256 TEXT NOT NULL,       -- the .tar.gz; identical rebuilds share it
    problem_count INTEGER NOT NULL,
    allow_failing INTEGER NOT NULL DEFAULT 0,   -- 1 when built despite failing gates
    manifest TEXT NOT NULL,             -- manifest.json as written
    out_dir TEXT NOT NULL DEFAULT '',
    built_at TEXT NOT NULL,             -- when (database only: the bundle has no clock time)
    actor TEXT NOT NULL,
    UNIQUE (name, version)
);

CREATE TABLE release_problems (
    release_id INTEGER NOT NULL REFERENCES releases(id) ON DELETE CASCADE,
    problem_id TEXT NOT NULL,           -- no FK: a release remembers problems deleted later
    content_sha256 TEXT NOT NULL,       -- problems.jsonl content_sha256 at release time
    PRIMARY KEY (release_id, problem_id)
);

CREATE INDEX release_problems_problem ON release_problems (problem_id);

CREATE TABLE problem_imports (
    problem_id TEXT PRIMARY KEY REFERENCES problems(id) ON DELETE CASCADE,
    origin TEXT NOT NULL CHECK (origin IN ('dlbench-txt', 'dlbench-csv', 'release')),
    origin_key TEXT NOT NULL,           -- DL-Bench file name, or "<name>-<version>"
    flags TEXT NOT NULL DEFAULT '[]',   -- JSON list, e.g. ["commit_unpinned", "license_unknown"]
    raw TEXT NOT NULL DEFAULT '{}',     -- JSON: the record as written upstream (labels as spelled)
    imported_at TEXT NOT NULL,
    actor TEXT NOT NULL
);

CREATE INDEX problem_imports_origin ON problem_imports (origin, origin_key);
