"""The bundle's README.md: a datasheet (what, how built, distributions, results, limits)."""

from __future__ import annotations

from dataclasses import dataclass, field

from curator.evaluation.pass_at_k import KS, mean_pass_at_k, per_problem
from curator.labels import AXES, DEFAULT_LABELS
from curator.problem import Problem
from curator.release.gates import Failure, Settings

_NAMES = {(label.axis, label.slug): label.name for label in DEFAULT_LABELS}
_AXIS_TITLES = {"stage": "Pipeline stage", "task": "ML task", "data": "Input data type"}


@dataclass
class Facts:
    name: str
    version: str
    license: str | None
    problems: list[Problem]
    counts: dict
    results: list[dict]
    annotations: list[dict]
    settings: Settings
    failing: list[Failure] = field(default_factory=list)
    description: str = ""
    csv_name: str = "dlbench.csv"
    agreement: dict = field(default_factory=dict)   # axis -> curator.review.agreement + annotators
    validity: dict = field(default_factory=dict)    # problem id -> the row's validity or None


def _table(header: list[str], rows: list[list], numeric: bool = True) -> list[str]:
    """A markdown table; with `numeric`, every column after the first is right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i == 0 or not numeric else "---:"
                          for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _distribution(facts: Facts, axis: str) -> list[str]:
    tally = facts.counts.get(axis, {})
    total = facts.counts["problems"]
    order = [label.slug for label in DEFAULT_LABELS if label.axis == axis]
    keys = [k for k in order if k in tally] + sorted(k for k in tally if k not in order)
    rows = [[_NAMES.get((axis, k), k), f"`{k}`", tally[k], _pct(tally[k], total)] for k in keys]
    return _table([_AXIS_TITLES[axis], "slug", "problems", "share"], rows)


def _methods(facts: Facts) -> dict[str, dict[str, int]]:
    """axis -> {"majority": n, "adjudicated": n, "single": n} over the labels rows."""
    out = {axis: {"majority": 0, "adjudicated": 0, "single": 0} for axis in AXES}
    for row in facts.annotations:
        if row.get("type") != "labels":
            continue
        for axis, how in (row.get("decided") or {}).items():
            out[axis][how["method"]] = out[axis].get(how["method"], 0) + 1
    return out


def _agreement(facts: Facts) -> list[str]:
    """How the labels were decided and how far their annotators agreed, per dimension."""
    methods = _methods(facts)
    rows = []
    for axis in AXES:
        summary = facts.agreement.get(axis) or {}
        alpha = summary.get("alpha")
        kappas = [k for k in (summary.get("kappa") or {}).values() if k is not None]
        m = methods[axis]
        rows.append([_AXIS_TITLES[axis], "-" if alpha is None else f"{alpha:.3f}",
                     summary.get("items", 0), summary.get("annotators", 0),
                     f"{min(kappas):.2f}–{max(kappas):.2f}" if kappas else "-",
                     m["majority"], m["adjudicated"], m["single"]])
    lines = ["Labels decided by a panel (several annotators vote blind, the majority "
             "decides, ties are adjudicated) carry how in `annotations.jsonl` (`decided`: "
             "`majority` with `votes` of `of`, `adjudicated`, or `single` annotator, and "
             "the `votes`). Krippendorff's alpha (nominal) is over the problems with two or "
             "more votes; Cohen's kappa per pair of annotators over the problems both "
             "labelled.", ""]
    lines += _table(["dimension", "alpha", "problems voted", "annotators", "kappa range",
                     "majority", "adjudicated", "single"], rows)
    return lines


def _pass_at_k(facts: Facts) -> list[str]:
    """pass@k per model (unbiased estimator), over problems whose reference passes."""
    reference_ok = {r["task_id"] for r in facts.results
                    if r["solution_kind"] == "reference" and r.get("outcome") == "passed"}
    per_model = per_problem(
        (r["model"], r.get("technique"), r["task_id"], r.get("outcome") == "passed")
        for r in facts.results if r["solution_kind"] == "sample" and r["task_id"] in reference_ok)
    if not per_model:
        return ["No model samples were evaluated for this release."]
    labels = {f"{facts.name}/{p.id}": p for p in facts.problems}
    lines = _table(["model", "problems", "samples"] + [f"pass@{k}" for k in KS], [
        [model, len(problems), sum(n for n, _ in problems.values())] + [
            _fmt(mean_pass_at_k(list(problems.values()), k)) for k in KS]
        for model, problems in sorted(per_model.items())])
    for axis in AXES:
        values = sorted({getattr(p, axis) or "unlabelled" for p in facts.problems})
        rows = []
        for model, problems in sorted(per_model.items()):
            row = [model]
            for value in values:
                pairs = [v for tid, v in problems.items()
                         if (getattr(labels[tid], axis) or "unlabelled") == value]
                row.append(_fmt(mean_pass_at_k(pairs, 1)))
            rows.append(row)
        lines += ["", f"pass@1 by {_AXIS_TITLES[axis].lower()}:", ""]
        lines += _table(["model"] + [_NAMES.get((axis, v), v) for v in values], rows)
    return lines


def _share(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    if not values:
        return None
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _test_strength(facts: Facts) -> list[str]:
    """How well each problem's tests catch a wrong answer (`curator validate`)."""
    ids = [p.id for p in facts.problems]
    found = {pid: facts.validity.get(pid) for pid in ids}
    done = [pid for pid in ids if found[pid]]
    if not done:
        return ["No problem was validated (`curator validate`): whether the tests fail a "
                "wrong answer is not known for this release."]
    weak = [pid for pid in done if not found[pid]["discriminates"]]
    flaky = [pid for pid in done if found[pid]["flaky_tests"]]
    scores = [found[pid]["mutation_score"] for pid in done
              if found[pid]["mutation_score"] is not None]
    median = _median(scores)
    lines = [
        (f"{len(done)} of {len(ids)} problems were validated: a stub of the entry point "
         "(raising `NotImplementedError`) was run against the tests, the reference was run "
         "repeatedly, and AST mutants of the reference (operators, constants, dropped "
         "statements, swapped arguments, `dim` values, reductions) were run against the "
         f"tests. {len(done) - len(weak)} discriminate (the stub fails at least one test), "
         f"{len(weak)} do not; {len(flaky)} have flaky tests; median mutation score "
         + ("-" if median is None else f"{median:.2f}")
         + f" over {len(scores)} problems with mutants. The same figures are in each "
         "`problems.jsonl` row under `validity`."),
        "",
    ]
    rows = []
    for pid in done:
        v = found[pid]
        score = "-" if v["mutation_score"] is None else \
            f"{v['mutation_score']:.2f} ({v['killed']}/{v['mutants']})"
        rows.append([pid, "yes" if v["discriminates"] else "no",
                     _share(v["stub_failed_share"]), len(v["flaky_tests"] or []), score,
                     len(v["survivors"] or [])])
    lines += _table(["problem", "stub fails a test", "share of tests the stub fails",
                     "flaky tests", "mutation score (killed/mutants)", "surviving mutants"],
                    rows, numeric=False)
    return lines


def _fmt(value) -> str:
    return "-" if value is None else f"{100 * value[0]:.1f}"


def _limitations(facts: Facts) -> list[str]:
    c = facts.counts
    items = []
    if c.get("repo_backed"):
        items.append(f"{c['repo_backed']} problem(s) run against upstream repositories at "
                     "pinned commits; their results depend on those repositories' own "
                     "dependencies being installable.")
    if facts.failing:
        ids = sorted({f.problem_id for f in facts.failing})
        items.append(f"This release was built with --allow-failing: {len(ids)} problem(s) "
                     "fail at least one release gate (listed in manifest.json under "
                     "`failing`): " + ", ".join(ids) + ".")
    single = sum(1 for row in facts.annotations if row.get("type") == "labels"
                 and all(d["method"] == "single" for d in (row.get("decided") or {}).values())
                 and len({h["by"] for h in row.get("history", [])}) <= 1)
    if single:
        items.append(f"{single} problem(s) were labelled by a single person (see "
                     "annotations.jsonl for who set each label); label agreement is not "
                     "reported for them.")
    if not any(r["solution_kind"] == "sample" for r in facts.results):
        items.append("No model results are included yet.")
    items.append("Reference solutions were verified on CPU with the pinned interpreter and "
                 "libraries recorded in results.jsonl (`env`); other versions may behave "
                 "differently.")
    items.append("Timeouts scale with the reference's own measured time, so very slow "
                 "machines may still time out correct solutions.")
    items.append(f"Problems are function-level: {c.get('function', 0)} functions and "
                 f"{c.get('method', 0)} class methods; they do not measure repository-level "
                 "or multi-file generation.")
    return [f"- {item}" for item in items]


def render(facts: Facts) -> str:
    c = facts.counts
    total = c["problems"]
    references = [r for r in facts.results if r["solution_kind"] == "reference"]
    passed = sum(r.get("outcome") == "passed" for r in references)
    upstream = sorted({str(p.source.get("repo")) for p in facts.problems
                       if p.source and p.source.get("repo")})
    lines = [f"# {facts.name} {facts.version}", ""]
    if facts.description:
        lines += [facts.description.strip(), ""]
    lines += [
        ("A function-level deep-learning code-generation benchmark in the style of DL-Bench: "
         "each problem is a deep-learning function (pre/post-processing, model construction, "
         "training, inference, evaluation) with a natural-language prompt, a reference "
         "solution, unit tests, provenance, and three labels (pipeline stage, ML task, input "
         "data type). Models are scored with the unbiased pass@k estimator."),
        "",
        "## Contents",
        "",
    ]
    lines += _table(["file", "what it holds"], [
        ["`problems.jsonl`", f"{total} problems, one JSON object per line"],
        [f"`{facts.csv_name}`", "the same problems in the DL-Bench CSV form and label spellings"],
        ["`taxonomy.json`", "label vocabularies and the bug taxonomy"],
        ["`annotations.jsonl`", (f"{c.get('annotations', 0)} rows: labels with who set "
                                 "them, and review labels of failing samples")],
        ["`results.jsonl`", f"{c.get('results', 0)} runs: reference solutions and model samples"],
        ["`LICENSES/`", "licence notices of the original problems and each upstream repository"],
        ["`manifest.json`", "name, version, counts, sha256 and size of every file"],
    ], numeric=False)
    derived = total - c.get("original", 0)
    if derived:
        origin = (f"{derived} were derived from {len(upstream)} upstream "
                  + ("repository" if len(upstream) == 1 else "repositories")
                  + " at pinned commits: " + ", ".join(upstream) + ".")
    else:
        origin = "none was derived from an upstream repository."
    lines += [
        "",
        ("Load it with any JSON-lines reader, e.g. "
         "`datasets.load_dataset(\"json\", data_files=\"problems.jsonl\")`. "
         "Fields of `problems.jsonl`: `task_id` (`<name>/<id>`), `entry_point`, `kind` "
         "(`function` or `method`), `instruct_prompt`, `code_prompt` (what a completion "
         "continues), `canonical_solution`, `test` (a pytest file importing the entry point "
         "from `solution`, or null), `test_node_ids` (pytest node ids in the upstream "
         "repository, or null), `stage`, `task`, `data`, `framework`, `libs`, `source` "
         "(provenance, null for original work), `validity` (test strength: does a stub fail "
         "the tests, flaky tests, mutation score, surviving mutants; null when not "
         "validated), `content_sha256` (sha256 of the row's canonical JSON without "
         "`task_id`, `validity` and itself)."),
        "",
        "## How it was built",
        "",
        f"- {c.get('original', 0)} problem(s) were written for this benchmark; {origin}",
        ("- Every problem passed these release gates before inclusion"
         + (" (except those listed under Known limitations)" if facts.failing else "")
         + ": the reference solution passes its tests on the pinned environment (flaky "
         f"references excluded), at least {facts.settings.min_tests} tests, stage/task/data "
         "labels set, prompt present, provenance and licence known, and no near-duplicate "
         f"(normalised-code similarity below {facts.settings.near_duplicate_threshold})."),
        (f"- Reference runs: {passed} of {len(references)} recorded reference runs passed "
         "(results.jsonl)."),
        ("- A pass requires every expected test to report a pass; collection errors, skips, "
         "xfails and early exits count as failures."),
        "",
        "## Distribution",
        "",
        (f"{total} problems: {c.get('function', 0)} functions, {c.get('method', 0)} class "
         f"methods; {c.get('repo_backed', 0)} run against upstream repositories."),
        "",
    ]
    for axis in AXES:
        lines += _distribution(facts, axis) + [""]
    lines += ["## Test strength", ""]
    lines += _test_strength(facts) + [""]
    lines += ["## Label agreement", ""]
    lines += _agreement(facts) + [""]
    lines += ["## Results", ""]
    lines += _pass_at_k(facts)
    lines += ["", "## Known limitations", ""]
    lines += _limitations(facts)
    lines += ["", "## Licence", "",
              (f"Original problems: {facts.license or 'unknown'}. Problems derived from "
               "upstream repositories keep their repositories' licences; see `LICENSES/`."),
              ""]
    return "\n".join(lines)
