"""`curator dlbench rebuild`: a whole DL-Bench release made runnable in one command.

For every registered repository with imported DL-Bench problems (or those given with
--repo NAME=SOURCE; --only NAME picks some): resolve its problems (as of a date when
given), build its environment (`curator repo env`: recipe, lock, framework import
check), then triage each resolved reference (curator.runs.triage: 3 runs, every failing
test excluded with its cause, green when the rest pass and exercise the function). It
resumes where it stopped: an environment whose inputs did not change is reused, and a
reference already triaged with its current text is not run again. The triage's
exclusions are written to the repository's recipe, reviewable in git; so is a module
that a reference's tests could not import and nobody declared (then the environment is
built again and those references triaged again). A reference whose release tests pass
with a stub of its function (they never call it) gets the repository's tests that use it,
said in its resolution notes, and is triaged again; one whose first run timed out on
test modules the release gives whole runs only their tests that use the function.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from curator import runs, sync
from curator.dlbench import fileformat
from curator.dlbench import resolve as resolve_mod
from curator.dlbench import upstream as upstream_mod
from curator.dlbench.upstream import Snapshot, tests_calling, tests_calling_through
from curator.errors import CuratorError
from curator.progress import CancelCheck, checkpoint
from curator.repos import checkout, environments, identity, importcheck, recipes, requirements, uv
from curator.repos.gitcache import GitError, cache_for, normalise_source
from curator.store import Store
from curator.store import problem_imports as import_store
from curator.store import problems as problem_store
from curator.store import repos as registered_repos
from curator.workspace import Workspace

# (repository name, what it is doing, done, total): one line per repository.
RepoProgress = Callable[[str, str, int, int], None]


@dataclass
class RepoResult:
    name: str
    url: str = ""
    problems: int = 0
    resolved: int = 0
    env: str = "not built"
    green: int = 0
    green_ids: list[str] = field(default_factory=list)
    triaged: dict[str, int] = field(default_factory=lambda: {c: 0 for c in runs.CAUSES})
    not_green: list[dict] = field(default_factory=list)
    env_seconds: float = 0.0

    def to_json(self) -> dict:
        return {"name": self.name, "problems": self.problems, "resolved": self.resolved,
                "env": self.env, "green": self.green, "green_ids": sorted(self.green_ids),
                "triaged": dict(self.triaged), "not_green": self.not_green}


@dataclass
class RebuildReport:
    repos: list[RepoResult] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"repos": [r.to_json() for r in self.repos],
                "totals": {"problems": sum(r.problems for r in self.repos),
                           "resolved": sum(r.resolved for r in self.repos),
                           "green": sum(r.green for r in self.repos)}}


def imported_groups(store: Store) -> dict[str, list[dict]]:
    """DL-Bench name -> the import rows of its problems (problems that still exist)."""
    groups: dict[str, list[dict]] = {}
    for row in import_store.rows_for(store, import_store.DLBENCH_ORIGINS):
        if not problem_store.exists(store, row["problem_id"]):
            continue
        problem = problem_store.get(store, row["problem_id"])
        url = str((problem.source or {}).get("repo") or "")
        if not url:
            continue
        row["url"] = url
        groups.setdefault(fileformat.repo_short_name(url), []).append(row)
    return groups


def by_repository(sources: dict[str, str], names) -> dict[str, dict[str, str]]:
    """The given NAME=SOURCE pairs per imported repository they name (`names`, as
    `imported_groups` keys them; a name matches in any case): DL-Bench spells one
    repository two ways (`kornia`: 128 problems, `Kornia`: 4), and a run per spelling
    rebuilt and counted its problems twice. A name no repository has keeps its own entry
    (rebuild says so)."""
    known = {name.lower(): name for name in names}
    out: dict[str, dict[str, str]] = {}
    for name, source in sources.items():
        out.setdefault(known.get(name.lower(), name), {})[name] = source
    return out


def _is_resolved(row: dict) -> bool:
    try:
        return "resolved" in json.loads(row.get("flags") or "[]")
    except ValueError:
        return False


def _fresh_rows(store: Store, ids: list[str]) -> list[dict]:
    wanted = set(ids)
    return [r for r in import_store.rows_for(store, import_store.DLBENCH_ORIGINS)
            if r["problem_id"] in wanted]


def rebuild(store: Store, workspace: Workspace, sources: dict[str, str] | None = None,
            as_of: str | None = None, only: list[str] | tuple[str, ...] = (),
            progress: RepoProgress | None = None, cancelled: CancelCheck | None = None,
            engine=None) -> RebuildReport:
    """Resolve, build and triage every selected repository (see the module docstring)."""
    sources = dict(sources or {})
    note = progress or (lambda name, what, done, total: None)
    groups = imported_groups(store)
    by_lower = {name.lower(): name for name in groups}
    for name in [*sources, *only]:
        if name.lower() not in by_lower:
            raise CuratorError(f"{name}: no imported DL-Bench problem is from a repository "
                               f"of that name (known: {', '.join(sorted(groups)) or 'none'})")
    chosen = sorted({by_lower[n.lower()] for n in only} if only else groups)
    report = RebuildReport()
    own = engine is None
    if own:
        engine = runs._engine_for(workspace, runs.TRIAGE_RUNS)
    try:
        for name in chosen:
            checkpoint(cancelled, "rebuild")
            report.repos.append(_one(store, workspace, name, groups[name], sources, as_of,
                                     note, cancelled, engine))
    finally:
        if own:
            engine.close()
    return report


def _same_source(given: str, registered: dict) -> bool:
    """Whether `given` (a --repo SOURCE) is where the registered repository comes from."""
    try:
        source = normalise_source(given)
    except GitError:   # not a URL and no such folder: not the registered source
        return False
    return source == (registered.get("source") or registered.get("url"))


def _one(store: Store, workspace: Workspace, name: str, rows: list[dict],
         sources: dict[str, str], as_of: str | None, note: RepoProgress,
         cancelled: CancelCheck | None, engine) -> RepoResult:
    url = rows[0]["url"]
    result = RepoResult(name=name, url=url, problems=len(rows))
    given = {k: v for k, v in sources.items() if k.lower() == name.lower()}
    registered = registered_repos.by_url(store, url)
    if registered is None and not given:
        result.env = "repository not registered: give --repo NAME=SOURCE"
        result.not_green = [{"id": r["problem_id"], "reason": result.env} for r in rows]
        return result
    note(name, "resolving", 0, len(rows))
    # A repository resolved before at the same date keeps its pins (resume); a new
    # source or date resolves again. The same source given again (the same command run
    # again after a stop) is no new source: resolving again would put back the release's
    # tests in place of those the rebuild chose, and triage them all again.
    if given and registered is not None and _same_source(next(iter(given.values())),
                                                         registered):
        given = {}
    if given or as_of is not None or not all(_is_resolved(r) for r in rows):
        if not (registered is not None and not given and as_of is not None and
                str(registered.get("as_of") or "") == as_of and all(_is_resolved(r)
                                                                    for r in rows)):
            resolved = resolve_mod.resolve(
                store, workspace, {name: next(iter(given.values()))} if given else {},
                as_of=as_of, only_urls={url}, cancelled=cancelled,
                progress=lambda d, t, label: note(name, "resolving", d, t))
            del resolved
    rows = _fresh_rows(store, [r["problem_id"] for r in rows])
    reasons = {}
    for row in rows:
        if not _is_resolved(row):
            try:
                reasons[row["problem_id"]] = json.loads(row.get("resolution") or "{}").get(
                    "reason") or "unresolved"
            except ValueError:
                reasons[row["problem_id"]] = "unresolved"
    resolved_ids = sorted(r["problem_id"] for r in rows if _is_resolved(r))
    result.resolved = len(resolved_ids)
    result.not_green = [{"id": pid, "reason": f"unresolved: {why}"}
                        for pid, why in sorted(reasons.items())]
    if not resolved_ids:
        result.env = "nothing resolved"
        return result
    note(name, "environment", 0, 7)
    started = time.monotonic()
    try:
        env = environments.build(store, workspace, url, cancelled=cancelled,
                                 progress=lambda d, t, label: note(name, f"environment: {label}",
                                                                   d, t))
        result.env = "ok" if env.ok else env.reason
    except CuratorError as exc:
        result.env = str(exc)
    result.env_seconds = round(time.monotonic() - started, 1)
    if result.env != "ok":
        result.not_green += [{"id": pid, "reason": f"environment: {result.env}"}
                             for pid in resolved_ids]
        return result
    keep = _apply_recipe_exclusions(store, workspace, url, resolved_ids)
    state = {"done": 0, "pid": ""}

    def on_test(problem_id: str, test_id: str, done: int, total: int | None) -> None:
        of = f"/{total}" if total else ""
        note(name, f"{state['pid']} test {done}{of} {test_id}", state["done"],
             len(resolved_ids))

    def on_problem(done: int, total: int, label: str) -> None:
        state["done"], state["pid"] = done, label.split(":", 1)[0]
        note(name, f"triage {label}", done, total)

    triaged = runs.triage(store, workspace, resolved_ids, engine=engine, cancelled=cancelled,
                          progress=on_problem, test_progress=on_test, keep=keep)
    tried: set[str] = set()
    triaged, seconds, env = _with_missing_modules(
        store, workspace, name, url, env, triaged, note, cancelled,
        dict(progress=on_problem, test_progress=on_test, keep=keep), tried)
    result.env_seconds = round(result.env_seconds + seconds, 1)
    before = triaged
    triaged = _with_tests_that_call_it(
        store, workspace, url, rows, triaged, engine, cancelled,
        dict(progress=on_problem, test_progress=on_test, keep=keep))
    if triaged is not before:
        # the tests added there may want what the environment lacks too (small-text's
        # random_text_classification_dataset: 40 of them met numpy 2's removals)
        triaged, seconds, env = _with_missing_modules(
            store, workspace, name, url, env, triaged, note, cancelled,
            dict(progress=on_problem, test_progress=on_test, keep=keep), tried)
        result.env_seconds = round(result.env_seconds + seconds, 1)
    causes: Counter = Counter()
    env_row = environments.env_row(store, registered_repos.by_url(store, url)["id"])
    left = environments.left_out(env_row["lock"] if env_row else "")
    recipe = recipes.load(workspace, url)
    for item in triaged:
        causes.update(item.causes.values())
        if item.green:
            result.green_ids.append(item.problem_id)
        else:
            result.not_green.append({"id": item.problem_id, "reason": _environment_reason(
                item.reason, left, env.package) + _not_added_note(recipe, item.problem_id)})
    result.green = len(result.green_ids)
    result.triaged = {c: causes.get(c, 0) for c in runs.CAUSES}
    _record_in_recipe(store, workspace, url, resolved_ids)
    note(name, "done", len(resolved_ids), len(resolved_ids))
    return result


def _with_missing_modules(store: Store, workspace: Workspace, name: str, url: str, env,
                          triaged: list[runs.TriageResult], note: RepoProgress,
                          cancelled: CancelCheck | None, options: dict,
                          tried: set[str] | None = None
                          ) -> tuple[list[runs.TriageResult], float, object]:
    """References whose tests cannot be collected for a module nobody declared (a test
    module's import, or a module of the repository its package does not import: pyod's
    combination.py imports `combo`, declared only in docs/requirements.txt): the module's
    distribution goes into the recipe's extras, the environment is built again and those
    references are triaged again, up to environments.MISSING_MODULE_ROUNDS times.
    `tried`: requirements asked for before (by an earlier call), never asked again.
    Requirements wanted together with which the environment does not build are tried
    one at a time, each kept when it fits (`_built_with`).
    Returns the triage results, the seconds spent building and the environment."""
    tried = set() if tried is None else tried
    seconds = 0.0
    imports = None
    for _ in range(environments.MISSING_MODULE_ROUNDS):
        left = environments.left_out(env.lock)
        excluded_for: dict[str, set[str]] = {}
        # (what the lock already has would build the same environment again)
        wanted = {r: ids for r, ids in missing_requirements(
                      store, triaged, env.package, test_reader(store, workspace),
                      excluded_for, lock=env.lock).items()
                  if r not in tried and may_ask(r, left)
                  and not environments.locked_satisfies(r, env.lock)}
        if imports is None:
            imports = _env_imports(store, workspace, url)
        recipe = recipes.load(workspace, url)
        skipped = {r: found for r, found in skipped_requirements(
                       store, workspace, url, triaged, env.package, imports).items()
                   if r not in tried and may_ask(r, left) and
                   not environments.locked_satisfies(r, env.lock) and
                   r not in (recipe.not_added if recipe else {})}
        for requirement, (ids, _why) in skipped.items():
            wanted.setdefault(requirement, [])
            wanted[requirement] += [p for p in ids if p not in wanted[requirement]]
        if not wanted:
            break
        tried.update(wanted)
        progress = lambda d, t, label: note(name, f"environment: {label}", d, t)  # noqa
        started = time.monotonic()
        failures: dict[str, str] = {}
        built = _built_with(store, workspace, url, list(wanted), cancelled, progress,
                            failures)
        if built is None and len(wanted) > 1:
            # one of them may be what does not fit (pytorch3d: torchvision wants a torch
            # its extension does not compile against, and took tabulate out with it):
            # each alone, kept when it fits beside those kept before
            kept = {}
            for requirement, ids in wanted.items():
                if _built_with(store, workspace, url, [requirement], cancelled,
                               progress, failures) is not None:
                    kept[requirement] = ids
            wanted = kept
            built = environments.build(store, workspace, url, cancelled=cancelled,
                                       progress=progress) if kept else None
        _record_skipped(workspace, url, skipped, wanted if built is not None and built.ok
                        else {}, failures)
        if built is None or not built.ok:
            # the environment as it was (its triage stands)
            env = environments.build(store, workspace, url, cancelled=cancelled,
                                     progress=progress)
            seconds += time.monotonic() - started
            break
        env = built
        seconds += time.monotonic() - started
        # the tests excluded for want of them (maybe recorded in the recipe by an earlier
        # rebuild) are tried again
        recipe = recipes.load(workspace, url)
        ours = {n for r in wanted for n in excluded_for.get(r, ())}
        stale = {node for node, why in (recipe.exclude if recipe else {}).items()
                 if node in ours or environments.missing_requirement(why, env.package)
                 in wanted}
        if stale:
            recipe.exclude = {k: v for k, v in recipe.exclude.items() if k not in stale}
            recipes.save(workspace, recipe)
            options = {**options, "keep": set(options.get("keep") or ()) - stale}
        again = {p for ids in wanted.values() for p in ids}
        # fresh warm workers: the environment was rebuilt under the old ones
        engine = runs._engine_for(workspace, runs.TRIAGE_RUNS)
        try:
            redone = {r.problem_id: r for r in runs.triage(
                store, workspace, sorted(again), engine=engine, cancelled=cancelled,
                resume=False, **options)}
        finally:
            engine.close()
        triaged = [redone.get(item.problem_id, item) for item in triaged]
    return triaged, seconds, env


def _built_with(store: Store, workspace: Workspace, url: str, wanted: list[str],
                cancelled: CancelCheck | None, progress,
                failures: dict[str, str] | None = None) -> environments.EnvReport | None:
    """The environment built again with `wanted` added to the recipe's extras, or None
    when it does not build or is broken with them (then they are out of the recipe
    again, and `failures` says why for each of them)."""
    try:
        built = environments.build(store, workspace, url, extras=wanted,
                                   cancelled=cancelled, progress=progress)
        why = built.reason
    except CuratorError as exc:
        built, why = None, str(exc)
    if built is not None and built.ok:
        return built
    if failures is not None:
        text = " ".join((why or "it did not build").split())[:400]
        failures.update({w: text for w in wanted if len(wanted) == 1 or w not in failures})
    recipe = recipes.load(workspace, url)
    if recipe is not None:
        recipe.extras = [e for e in recipe.extras if e not in wanted]
        recipes.save(workspace, recipe)
    return None


_NO_WHEEL = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\S* (?:has|have) no usable wheels")


def may_ask(requirement: str, left: dict[str, str]) -> bool:
    """Whether a module's distribution a test missed may be asked for: not when the lock
    left it out (a torch companion built only for CUDA here), unless only for want of a
    wheel. A test requirement is taken from wheels only; one no release of which has a
    wheel (nncf's efficientnet_pytorch==0.7.1, a pure-Python sdist) that the tests then
    import goes into the recipe's extras, which are built from source as runtime
    requirements are: 4 of nncf's references did not collect without it."""
    name = requirements.requirement_name(requirement)
    why = left.get(name or "")
    if why is None:
        return True
    if uv.wheel_less(why) == name:
        return True
    return any(requirements.canonical(found) == name for found in _NO_WHEEL.findall(why))


_COULD_NOT_IMPORT = re.compile(r"could not import '([A-Za-z_][A-Za-z0-9_.]*)'")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def skip_modules(message: str, node_id: str, guarded: dict[str, str]) -> list[str]:
    """The modules a skipped test's reason says it went without: `pytest.importorskip`'s
    "could not import 'X'", or a name that the test module or a conftest above it imports
    under try/except ImportError (`guarded`: name -> module) named in the reason
    (pennylane's conftest skips a jax-marked test "... only runs with ['torch']
    interfaces(s) but jax interface provided" when its `try: import jax` failed). The
    test's own node id, which such a reason may repeat, is no evidence."""
    text = (message or "").replace(node_id, " ")
    found = _COULD_NOT_IMPORT.findall(text)
    for word in _WORD.findall(text):
        module = guarded.get(word)
        if module is None and word in guarded.values():
            module = word
        if module is not None:
            found.append(module)
    return list(dict.fromkeys(found))


def _conftests(path: str) -> list[str]:
    """The conftest.py files pytest reads for the test file `path`, outermost first."""
    parts = path.split("/")[:-1]
    return ["/".join([*parts[:i], "conftest.py"]) for i in range(len(parts) + 1)]


def _latest_reference_tests(store: Store, problem_id: str) -> list[dict]:
    """The tests of the problem's latest reference run (its triage's)."""
    for row in runs.history(store, problem_id, limit=20):
        if row.get("solution_kind") == "reference" and isinstance(row.get("tests"), list):
            return [t for t in row["tests"] if isinstance(t, dict)]
    return []


def skipped_requirements(store: Store, workspace: Workspace, url: str,
                         triaged: list[runs.TriageResult], package: str | None,
                         imports: Callable[[str], bool]
                         ) -> dict[str, tuple[list[str], str]]:
    """requirement -> (the references not green for want of it, why): references whose
    remaining tests pass with a stub of the function because the tests that call it
    (`tests_calling`) were skipped for want of a module the environment does not import
    (`skip_modules`; pennylane's _generate_tapes_and_coeffs, whose every test is marked
    for jax, which nothing pennylane declares installs). Its distribution is what the
    environment lacks, not a test that cannot run here."""
    wanted: dict[str, tuple[list[str], str]] = {}
    snapshots: dict[str, Snapshot] = {}
    cache = None
    for item in triaged:
        if item.green or not item.reason.startswith(runs.STUB_PASSES):
            continue
        skipped = [t for t in _latest_reference_tests(store, item.problem_id)
                   if t.get("outcome") == "skipped"]
        problem = problem_store.get(store, item.problem_id)
        source = problem.source or {}
        commit, path = source.get("commit"), source.get("path")
        if not skipped or not commit or not path:
            continue
        try:
            cache = cache or cache_for(workspace.repos_dir, url)
            if commit not in snapshots:
                snapshots[commit] = Snapshot(cache, commit)
            snapshot = snapshots[commit]
            calling = tests_calling(snapshot, problem.entry_point, path, limit=None)
        except (GitError, OSError):
            continue
        for test in skipped:
            node = str(test.get("id") or "")
            if not any(_runs(n, node) for n in calling):
                continue
            file = node.split("::", 1)[0]
            guarded: dict[str, str] = {}
            for source_path in [*_conftests(file), file]:
                guarded.update(environments.guarded_imports(snapshot.text(source_path) or ""))
            message = runs.skip_reason(test)
            for module in skip_modules(message, node, guarded):
                if package and module.split(".")[0] == package or imports(module):
                    continue
                requirement = environments.missing_requirement(
                    f"ModuleNotFoundError: No module named '{module}'", package)
                if requirement is None:
                    continue
                ids, why = wanted.get(requirement, ([], ""))
                if item.problem_id not in ids:
                    ids = [*ids, item.problem_id]
                why = why or (f"{node}, a test that calls {problem.entry_point} "
                              f"({item.problem_id}), skipped without {module}: {message}"
                              )[:400]
                wanted[requirement] = (ids, why)
    return wanted


def _not_added_note(recipe: recipes.Recipe | None, problem_id: str) -> str:
    """What the recipe's [not_added] says of a module the problem's tests wanted."""
    found = [f"{requirement} not added to the environment: "
             f"{why.rpartition('; not added: ')[2]}"
             for requirement, why in sorted((recipe.not_added if recipe else {}).items())
             if f"({problem_id})" in why]
    return "".join(f"; {text}" for text in found)[:600]


def _record_skipped(workspace: Workspace, url: str,
                    skipped: dict[str, tuple[list[str], str]], added: dict[str, list[str]],
                    failures: dict[str, str]) -> None:
    """Why each requirement `skipped_requirements` asked for is in the recipe's extras
    (`extras_why`), or why it is not (`not_added`: what wanted it and what failed)."""
    recipe = recipes.load(workspace, url)
    if recipe is None or not skipped:
        return
    for requirement, (ids, why) in skipped.items():
        if requirement in added and requirement in recipe.extras:
            recipe.extras_why[requirement] = why
            recipe.not_added.pop(requirement, None)
        else:
            failed = failures.get(requirement) or "the environment did not build with it"
            wanted_by = "" if len(ids) < 2 else "; wanted by " + ", ".join(
                f"({pid})" for pid in ids)
            recipe.not_added[requirement] = f"{why}{wanted_by}; not added: {failed}"[:900]
    recipes.save(workspace, recipe)


def _with_tests_that_call_it(store: Store, workspace: Workspace, url: str, rows: list[dict],
                             triaged: list[runs.TriageResult], engine,
                             cancelled: CancelCheck | None, options: dict
                             ) -> list[runs.TriageResult]:
    """A second look at the tests of three kinds of references that are not green, with
    the repository's tests that use the function (`tests_calling`), then a second triage;
    each said in the resolution notes and done once per resolution (the record keeps what
    changed, maybe nothing):
    - its remaining tests pass with a stub of it: the release's tests never call it
      (GPflow's mvnquad, given the quadrature tests of ndiagquad). The tests that use it
      are added (`added_tests`).
    - no test is left, each excluded for what this machine lacks (`_machine_only`):
      pytorch3d's mesh_edge_loss, whose release module runs every test on "cuda:0". The
      tests that use it are added the same way (those that need a GPU too are excluded
      again by the triage, the release's stay, marked, for a machine that has one).
    - its first run timed out on test modules the release gives whole (pyro's): each is
      narrowed to its tests that use the function (`narrowed_tests`)."""
    by_id = {row["problem_id"]: row for row in rows}
    cache = cache_for(workspace.repos_dir, url)
    snapshots: dict[str, Snapshot] = {}
    imports = None
    redo = []
    with store.transaction():
        for item in triaged:
            stub = item.reason.startswith(runs.STUB_PASSES)
            machine = _machine_only(item)
            adding = stub or bool(machine)
            if item.green or not (adding or item.reason.startswith("timeout:")):
                continue
            key = "added_tests" if adding else "narrowed_tests"
            row = by_id.get(item.problem_id)
            try:
                record = json.loads((row or {}).get("resolution") or "{}")
                flags = json.loads((row or {}).get("flags") or "[]")
            except ValueError:
                continue
            problem = problem_store.get(store, item.problem_id)
            source = problem.source or {}
            commit, path = source.get("commit"), source.get("path")
            whole = {n for n in problem.test_node_ids if "::" not in n}
            if row is None or key in record or not commit or not path or \
                    not (adding or whole):
                continue
            try:
                if commit not in snapshots:
                    snapshots[commit] = Snapshot(cache, commit)
                # (all of them: the release's own come first, and pytorch3d's chamfer
                # module alone has more than the limit)
                found = tests_calling(snapshots[commit], problem.entry_point, path,
                                      within=None if adding else whole, limit=None)
            except (GitError, OSError) as exc:
                record.setdefault("notes", []).append(f"tests that use it not looked for: "
                                                      f"{exc}")
                found = []
            user = problem.entry_point.partition(".")[0]
            change = _not_covered(found, problem.test_node_ids)
            if adding and not change and commit in snapshots:
                # no test uses it directly: those that reach it through its callers
                try:
                    found, via = tests_calling_through(snapshots[commit],
                                                       problem.entry_point, path)
                except (GitError, OSError):
                    found, via = [], []
                change = _not_covered(found, problem.test_node_ids)
                if change:
                    user = f"{', '.join(via)}, which call{'s' * (len(via) == 1)} {user}"
            if adding:
                change = change[:upstream_mod.CALLING_TESTS_MAX]
            if adding and change and commit in snapshots:
                if imports is None:
                    imports = _env_imports(store, workspace, url)
                change, lacking = _collectable(snapshots[commit], change, imports)
                if lacking:
                    record.setdefault("notes", []).append(
                        "tests that use it left out: " + "; ".join(
                            f"{path} skips itself without {module}, which the environment "
                            f"does not import" for path, module in sorted(lacking.items())))
            if adding:
                nodes = [*problem.test_node_ids, *change]
                why = (f"pass with a stub of {problem.entry_point}" if stub else
                       f"cannot run here ({machine})")
                note = (f"tests {' '.join(change)} added: the release's tests {why} "
                        f"(found by their use of {user})")
            else:
                change = found
                nodes = [*[n for n in problem.test_node_ids if n not in whole], *change]
                note = (f"{' '.join(sorted(whole))} narrowed to the {len(change)} tests in "
                        f"it that use {user}: run whole, the first run timed out")
            record[key] = change
            if change:
                record.setdefault("notes", []).append(note)
                problem_store.save(store, replace(problem, test_node_ids=nodes))
                redo.append(item.problem_id)
            import_store.set_resolution(store, item.problem_id, flags, record)
    if not redo:
        return triaged
    sync.dump(store, workspace.problems_dir, redo)
    again = {r.problem_id: r for r in runs.triage(store, workspace, redo, engine=engine,
                                                   cancelled=cancelled, resume=False,
                                                   **options)}
    return [again.get(t.problem_id, t) for t in triaged]


def _machine_only(item: runs.TriageResult) -> str:
    """For a reference with no test left, each excluded for what this machine lacks (a
    GPU, the network): what they want ("3 needs_gpu"); "" otherwise."""
    if not item.reason.startswith(runs.NOTHING_LEFT) or not item.causes or \
            any(c not in runs.MACHINE_CAUSES for c in item.causes.values()):
        return ""
    tally = Counter(item.causes.values())
    return ", ".join(f"{n} {c}" for c, n in sorted(tally.items()))


def _skipped_at_import(tree) -> list[str]:
    """The modules a test file skips itself without, at module level: `jax =
    pytest.importorskip("jax")` (pennylane's tests/math/test_functions.py)."""
    out = []
    for node in getattr(tree, "body", ()):
        value = getattr(node, "value", None) if isinstance(
            node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Call) or not value.args:
            continue
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else \
            func.id if isinstance(func, ast.Name) else None
        first = value.args[0]
        if name == "importorskip" and isinstance(first, ast.Constant) and \
                isinstance(first.value, str):
            out.append(first.value)
    return out


def _collectable(snapshot: Snapshot, nodes: list[str], imports: Callable[[str], bool]
                 ) -> tuple[list[str], dict[str, str]]:
    """`nodes` but those of test files that skip themselves at import for want of a module
    the environment does not import (`imports(module)`): pytest, given such a file's test
    by node id, finds no collector and runs none of the others either (pennylane's
    allequal got tests of tests/math/test_functions.py, which skips without jax, and every
    run after ran no test). Also {file: the module it lacks} of those left out."""
    kept, lacking, seen = [], {}, {}
    for node in nodes:
        path = node.split("::")[0]
        if path not in seen:
            seen[path] = next((m for m in _skipped_at_import(snapshot.tree(path))
                               if not imports(m)), None)
            if seen[path] is not None:
                lacking[path] = seen[path]
        if seen[path] is None:
            kept.append(node)
    return kept, lacking


def _env_imports(store: Store, workspace: Workspace, url: str) -> Callable[[str], bool]:
    """Whether the interpreter the repository's runs use (its environment's) imports a
    module, in the sandbox, asked once each."""
    python = identity.python_for(store, url)

    @functools.lru_cache(maxsize=None)
    def imports(module: str) -> bool:
        return importcheck.check_module(python, module, runs.settings(workspace))[0]

    return imports


def _not_covered(found: list[str], given: list[str]) -> list[str]:
    """The node ids of `found` that none of `given` runs already: the release's
    `f::C` runs `f::C::t`, which it ran with the stub too, and given both, pytest runs
    only `t` of the class (small-text's QueryStrategiesTest lost its other tests)."""
    return [n for n in found if not any(_runs(g, n) for g in given)]


def _runs(given: str, node: str) -> bool:
    """Whether pytest, given the node id `given` (a file, a class, a test), runs `node`."""
    return node == given or node.startswith((given + "::", given + "["))


def _environment_reason(reason: str, left: dict[str, str], package: str | None) -> str:
    """A reference whose tests cannot import a package the environment left out (nncf's
    tests import torchvision, whose only build here is for CUDA torch) fails for that:
    the reason says so, not just the ModuleNotFoundError."""
    why = environments.why_left_out(reason, left, package) if _ended_badly(reason) else None
    return f"environment: {why} ({reason})"[:500] if why else reason


_ENDED_BADLY = re.compile(r"(error|crashed)( with the failing tests excluded)?: ")


def _ended_badly(reason: str) -> bool:
    """Whether a triage's reason is a run that errored or crashed: with every test in
    (`error: ...`), or once the failing ones were excluded (nncf's tensorflow helper:
    a torch test excluded as flaky, then `error with the failing tests excluded: ...
    the solution did not import: ModuleNotFoundError: No module named
    'tensorflow_datasets'`, which was never asked for)."""
    return _ENDED_BADLY.match(reason or "") is not None


def missing_requirements(store: Store, triaged: list[runs.TriageResult],
                         package: str | None,
                         read_test: Callable[[str, str], str] | None = None,
                         nodes: dict[str, set[str]] | None = None, lock: str = ""
                         ) -> dict[str, list[str]]:
    """requirement -> the references not green for want of it: tests that could not be
    collected for a module nobody declared (also a conftest's import, which stops pytest
    before it starts: emukit's conftest imports GPy, which meets numpy 2), and tests
    excluded as failing upstream for a module or a pytest plugin's fixture the
    environment lacks (nncf's "fixture 'mocker' not found"): the environment's, not
    upstream's, failures."""
    wanted: dict[str, list[str]] = {}
    for item in triaged:
        reasons = [(item.reason, "")] if _ended_badly(item.reason) else []
        reasons += [(row["reason"], row["node_id"])
                    for row in runs.excluded(store, item.problem_id)
                    if row["reason"].startswith("fails_upstream:")]
        for reason, node in reasons:
            requirement = environments.missing_requirement(reason, package)
            if requirement is None and node and read_test is not None:
                # NameError for a name the test module imports under try/except
                # (or for a module of the repository's imported there, which imports
                # a module the environment lacks: read at the problem's commit)
                requirement = environments.missing_guarded(
                    reason, read_test(item.problem_id, node.split("::", 1)[0]), package,
                    functools.partial(read_test, item.problem_id), lock)
            if requirement and item.problem_id not in wanted.get(requirement, []):
                wanted.setdefault(requirement, []).append(item.problem_id)
            if requirement and node and nodes is not None:
                nodes.setdefault(requirement, set()).add(node)
    return wanted


def test_reader(store: Store, workspace: Workspace) -> Callable[[str, str], str]:
    """(problem id, test file) -> the file's text at the problem's commit ("" when it
    cannot be read)."""
    def read(problem_id: str, path: str) -> str:
        source = problem_store.get(store, problem_id).source or {}
        try:
            _cache, root = checkout.pinned_checkout(workspace, source["repo"],
                                                    source["commit"], store)
            return (root / path).read_text(encoding="utf-8", errors="replace")
        except (CuratorError, KeyError, OSError):
            return ""
    return read


def _apply_recipe_exclusions(store: Store, workspace: Workspace, url: str,
                             ids: list[str]) -> set[str]:
    """Tests the recipe excludes (an earlier triage's, maybe elsewhere, or a maintainer's)
    that a problem runs are excluded here too before its triage, with the recipe's reason;
    their node ids (the triage keeps them out)."""
    recipe = recipes.load(workspace, url)
    if recipe is None or not recipe.exclude:
        return set()
    from curator.store import now

    for pid in ids:
        problem = problem_store.get(store, pid)
        have = {r["node_id"] for r in runs.excluded(store, pid)}
        for node_id, reason in recipe.exclude.items():
            if node_id in have or not any(node_id == t or node_id.startswith(t + "::") or
                                          node_id.startswith(t.rstrip("/") + "/")
                                          for t in problem.test_node_ids):
                continue
            with store.transaction():
                runs.add_excluded(store, pid, node_id, reason, now())
    return set(recipe.exclude)


def _record_in_recipe(store: Store, workspace: Workspace, url: str, ids: list[str]) -> None:
    recipe = recipes.load(workspace, url)
    if recipe is None:
        return
    before = dict(recipe.exclude)
    for pid in ids:
        for row in runs.excluded(store, pid):
            if runs.is_triage_exclusion(row["reason"]):
                recipe.exclude[row["node_id"]] = row["reason"]
    if recipe.exclude != before:
        recipes.save(workspace, recipe)
