"""Mining: git repositories -> candidate functions, the tests that exercise them, provenance.

The pieces, each usable from the CLI, the app and tests alike:

- `mine.mine(store, workspace, source, rev, with_tests, progress, cancelled)` — clone or
  fetch SOURCE into db/repos/ (curator.repos.gitcache), index one commit (index: parse with `ast`,
  find tests, score DL relevance, detect the licence) and store the candidates; returns
  a MineReport whose `to_json()` is the `curator mine --json` summary.
- `curator.store.candidates.list_rows / get / to_json / reject / suggestions_for` — the review queue.
- `promote.accept(store, workspace, candidate_id, problem_id=None)` — a draft
  repo-backed problem in the database and in problems/<id>/, with label suggestions in
  the `label_suggestions` table (never written as labels).

Repositories themselves (caches, identity, checkouts, licences, environments) are
curator.repos; reading and patching Python modules is curator.pysource.

Nothing here runs repository code: hooks, filters and submodules are switched off and
files are read from git objects, never from a work tree.
"""
