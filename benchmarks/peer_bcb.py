"""The engine against BigCodeBench's own harness, side by side on one sample file.

    .venv/bin/python benchmarks/peer_bcb.py [--workers 2] [--per-problem 5] [--curator CHECKOUT] [--skip-bcb]

Needs `pip install --no-deps bigcodebench==0.2.5` and matplotlib (the `bench` extra):
without matplotlib every BigCodeBench run fails at once in its resource guard. The sample file is made here
from the seed problems: per problem its reference and AST mutants of it (a flipped
operator, a shifted constant, a negated comparison, a stub), ~145 samples for 29 problems.

Side A: BigCodeBench 0.2.5's `untrusted_check` (one forked process per sample, with its
resource guard), `--workers` threads, run from a fresh interpreter that has not imported
torch, as BigCodeBench's own evaluate does. Its tests are the same pytest functions
wrapped in a unittest.TestCase (BigCodeBench runs unittest).
Side B: `curator samples eval --workers N` in a fresh workspace holding the same problems
(references run first and are not timed). Printed: both wall times, the ratio, verdict
agreement, and where the time goes: worker start (measured apart), the command's fixed
cost (run again with nothing left), per run its own duration, its tests' bodies, the rest
being overhead (forks, the solution process, the channel), and what a run costs beyond its
duration (preparing, cleaning up, the verdict, the messages, tidying its folder).
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "tests" / "fixtures" / "seed_problems"
CURATOR = [ROOT]   # the checkout whose curator runs side B (--curator: measure another)
PY = sys.executable


def _problems() -> list[dict]:
    import tomllib

    found = []
    for folder in sorted(SEED.iterdir()):
        if not (folder / "problem.toml").is_file():
            continue
        meta = tomllib.loads((folder / "problem.toml").read_text(encoding="utf-8"))
        found.append({"id": meta["id"], "entry_point": meta["entry_point"],
                      "solution": (folder / "solution.py").read_text(encoding="utf-8"),
                      "tests": (folder / "test_solution.py").read_text(encoding="utf-8")})
    return found


class _Mutate(ast.NodeTransformer):
    def __init__(self, kind: str):
        self.kind, self.done = kind, False

    def _once(self, node, new):
        if self.done:
            return node
        self.done = True
        return ast.copy_location(new, node)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        swap = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
        if self.kind == "operator" and type(node.op) in swap:
            return self._once(node, ast.BinOp(node.left, swap[type(node.op)](), node.right))
        return node

    def visit_Constant(self, node):
        if self.kind == "constant" and isinstance(node.value, (int, float)) and \
                not isinstance(node.value, bool):
            return self._once(node, ast.Constant(node.value + 1))
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        swap = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
                ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
        if self.kind == "compare" and len(node.ops) == 1 and type(node.ops[0]) in swap:
            return self._once(node, ast.Compare(node.left, [swap[type(node.ops[0])]()],
                                                node.comparators))
        return node


def _mutants(source: str, entry: str) -> list[str]:
    out = []
    for kind in ("operator", "constant", "compare"):
        tree = ast.parse(source)
        mutator = _Mutate(kind)
        tree = mutator.visit(tree)
        if mutator.done:
            out.append(ast.unparse(ast.fix_missing_locations(tree)))
    tree = ast.parse(source)
    name = entry.split(".")[-1]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            node.body = [ast.Return(ast.Constant(None))]
            break
    out.append(ast.unparse(tree))
    return out


def make_samples(per_problem: int) -> list[dict]:
    samples = []
    for problem in _problems():
        codes = [problem["solution"], *_mutants(problem["solution"], problem["entry_point"])]
        while len(codes) < per_problem:
            codes.append(copy.copy(codes[len(codes) % max(1, len(codes))]))
        for index, code in enumerate(codes[:per_problem]):
            samples.append({"task_id": problem["id"], "solution": code,
                            "sample_index": index})
    return samples


def unittest_tests(tests: str) -> str:
    """pytest functions as one unittest.TestCase, the form BigCodeBench runs."""
    tree = ast.parse(tests)
    body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and
                                         n.module == "solution")]
    names = [n.name for n in body if isinstance(n, ast.FunctionDef) and
             n.name.startswith("test")]
    module = ast.unparse(ast.Module(body=body, type_ignores=[]))
    methods = "".join(f"    def {name}(self):\n        {name}()\n\n" for name in names)
    return module + "\n\nimport unittest\n\nclass TestCases(unittest.TestCase):\n" + \
        (methods or "    pass\n")


BCB_RUNNER = textwrap.dedent("""\
    import json, sys, time
    from concurrent.futures import ThreadPoolExecutor
    from bigcodebench.eval import untrusted_check

    jobs = json.load(open(sys.argv[1]))
    workers = int(sys.argv[2])

    def one(job):
        started = time.monotonic()
        stat, details = untrusted_check(job["code"], job["test"], job["entry_point"],
                                        max_as_limit=30 * 1024, max_data_limit=30 * 1024,
                                        max_stack_limit=10, min_time_limit=1,
                                        gt_time_limit=20)
        return {"stat": stat, "seconds": time.monotonic() - started}

    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(one, jobs))
    print(json.dumps({"wall": time.monotonic() - started, "results": results}))
    """)


def run_bcb(samples: list[dict], problems: dict, workers: int, folder: Path) -> dict:
    jobs = [{"code": s["solution"], "test": unittest_tests(problems[s["task_id"]]["tests"]),
             "entry_point": problems[s["task_id"]]["entry_point"].split(".")[0]}
            for s in samples]
    (folder / "bcb_jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    (folder / "bcb_runner.py").write_text(BCB_RUNNER, encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run([PY, str(folder / "bcb_runner.py"), str(folder / "bcb_jobs.json"),
                           str(workers)], capture_output=True, text=True, check=True,
                          cwd=folder)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    data["process_wall"] = time.monotonic() - started
    return data


def curator_cli(workspace: Path, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(CURATOR[0]))
    done = subprocess.run([PY, "-m", "curator", "--workspace", str(workspace), *args],
                          capture_output=True, text=True, env=env, check=False, cwd="/")
    if done.returncode != 0:
        raise SystemExit(f"curator {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    text = done.stdout
    return json.loads(text[text.index("{"):]) if "{" in text else {}


def run_curator(samples: list[dict], workers: int, folder: Path) -> dict:
    workspace = folder / "ws"
    env = dict(os.environ, PYTHONPATH=str(CURATOR[0]))
    # from "/": `python -m` puts the working folder first on sys.path, and a run from a
    # checkout measured that checkout's curator whatever --curator said
    subprocess.run([PY, "-m", "curator", "init", str(workspace)], check=True, env=env,
                   capture_output=True, cwd="/")
    problems = workspace / "problems"
    problems.mkdir(exist_ok=True)
    for folder_ in SEED.iterdir():
        if (folder_ / "problem.toml").is_file():
            target = problems / folder_.name
            target.mkdir(exist_ok=True)
            for item in folder_.iterdir():
                (target / item.name).write_bytes(item.read_bytes())
    curator_cli(workspace, "load", "--json")
    curator_cli(workspace, "run", "--all", "--workers", str(workers), "--json")  # untimed
    path = folder / "samples.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    curator_cli(workspace, "samples", "import", str(path), "--model", "bench", "--json")
    started = time.monotonic()
    report = curator_cli(workspace, "samples", "eval", "--workers", str(workers), "--json")
    wall = time.monotonic() - started
    started = time.monotonic()   # again, nothing left to run: the command's fixed cost
    curator_cli(workspace, "samples", "eval", "--workers", str(workers), "--json")
    idle = time.monotonic() - started
    import sqlite3

    db = sqlite3.connect(workspace / "db" / "curator.sqlite")
    rows = db.execute("SELECT s.problem_id, s.sample_index, r.outcome, r.duration_s, "
                      "r.tests, r.env FROM runs r JOIN samples s ON s.id = r.sample_id "
                      "ORDER BY s.id").fetchall()
    return {"wall": wall, "report": report, "rows": rows, "idle": idle,
            "warm_up": worker_start(workers)}


WARM_UP = textwrap.dedent("""\
    import sys, time
    from curator.execution.engine import Engine

    started = time.monotonic()
    engine = Engine(workers=int(sys.argv[1]))
    engine.start()
    ready = engine.pool.wait_ready()
    print(time.monotonic() - started if ready else -1.0)
    engine.close()
    """)


def worker_start(workers: int) -> float:
    """Seconds until `workers` warm workers are ready (sandbox, torch, pytest, zygote),
    started as samples eval starts them; measured apart from the evaluation."""
    env = dict(os.environ, PYTHONPATH=str(CURATOR[0]))
    done = subprocess.run([PY, "-c", WARM_UP, str(workers)], capture_output=True,
                          text=True, env=env, check=False, cwd="/")
    try:
        return float(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return -1.0


PHASES = [("prepare", "before the run (hidden tests compiled, files)"),
          ("solution_start", "solution process (zygote fork, its folder)"),
          ("judge_fork", "judge fork"),
          ("collection", "judge start to collected (session, imports, collection)"),
          ("tests", "tests, of which:"),
          ("test_bodies", "  test bodies (pytest's durations)"),
          ("boundary_codec", "  boundary codec (judge side)"),
          ("boundary_wait", "  waiting for the solution process (incl. its import)"),
          ("boundary_ready", "  of it, the solution's import"),
          ("judge_exit", "judge end (teardown, exit), of which:"),
          ("judge_teardown", "  pytest after its report (before the exit)"),
          ("cleanup", "stopping the solution, reading output, of which:"),
          ("cleanup_stop", "  the solution killed, its exit awaited"),
          ("cleanup_tree", "  what is left of the run killed"),
          ("cleanup_files", "  output read, the solution's folder removed"),
          ("verdict", "verdict (events, output)"),
          ("worker", "the worker's whole turn (all of the above)"),
          ("exchange", "the engine's round trip (job sent to result read)"),
          ("judge_cpu", "CPU: the judge (its fork and exit too)"),
          ("solution_cpu", "CPU: the solution process (its helper aside)"),
          ("worker_cpu", "CPU: the worker, for the run")]


def print_breakdown(timings: list[dict]) -> None:
    """Median and mean of each phase of a run (RunResult.env["timing"])."""
    timings = [t for t in timings if t]
    if not timings:
        return
    print(f"\nphases of a run ({len(timings)} runs)        median ms    mean ms")
    for key, label in PHASES:
        values = [float(t[key]) for t in timings if isinstance(t.get(key), (int, float))]
        if values:
            print(f"  {label:52s} {1000 * statistics.median(values):8.1f} "
                  f"{1000 * statistics.mean(values):9.1f}")
    gaps = [t["exchange"] - t["worker"] for t in timings
            if isinstance(t.get("exchange"), float) and isinstance(t.get("worker"), float)]
    if gaps:
        print(f"  {'  of it, messages and the last run tidied':52s} "
              f"{1000 * statistics.median(gaps):8.1f} {1000 * statistics.mean(gaps):9.1f}")
    calls = [t["boundary_calls"] for t in timings if isinstance(t.get("boundary_calls"), int)]
    if calls:
        print(f"  calls across the boundary per run: median {statistics.median(calls):.0f}")


def where_time_goes(ours: dict, workers: int) -> None:
    if ours["rows"]:
        durations = [r[3] for r in ours["rows"]]
        bodies = [sum(t.get("duration_s", 0.0) for t in json.loads(r[4] or "[]"))
                  for r in ours["rows"]]
        overhead = [d - b for d, b in zip(durations, bodies)]
        busy = sum(durations) / workers
        print("\nwhere curator's time goes (per run, inside the worker):")
        print(f"  run duration      median {1000 * statistics.median(durations):7.1f} ms  "
              f"mean {1000 * statistics.mean(durations):7.1f} ms")
        print(f"  test bodies       median {1000 * statistics.median(bodies):7.1f} ms")
        print(f"  overhead          median {1000 * statistics.median(overhead):7.1f} ms  "
              f"(forks of judge and solution, the channel, pytest collection, cleanup)")
        print(f"  outside runs      {ours['wall'] - busy:7.1f} s of {ours['wall']:.1f} s "
              f"(CLI start, worker warm-up, claims and storing results), of which:")
        timings = [json.loads(r[5] or "{}").get("timing") or {} for r in ours["rows"]]
        exchanged = sum(t["exchange"] for t in timings if isinstance(t.get("exchange"), float))
        print(f"    worker start, measured apart    {ours['warm_up']:6.1f} s "
              f"(sandbox, torch and pytest imported, zygote, pytest configured)")
        print(f"    the command with nothing to run {ours['idle']:6.1f} s "
              f"(interpreter, imports, queries)")
        if exchanged:
            print(f"    per run, beyond its duration    {(exchanged - sum(durations)) / workers:6.1f} s "
                  f"(preparing, cleaning up, verdict, messages, tidying)")
            print(f"    the rest                        "
                  f"{ours['wall'] - exchanged / workers - ours['warm_up'] - ours['idle']:6.1f} s "
                  f"(batch ends, claims, recording; negative: warm-up overlapped)")
        print_breakdown(timings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--per-problem", type=int, default=5)
    parser.add_argument("--curator", type=Path, default=ROOT,
                        help="checkout whose curator to measure (default: this one)")
    parser.add_argument("--skip-bcb", action="store_true",
                        help="only side B (e.g. to measure another checkout)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy curator's workspace here afterwards, to look at its runs")
    args = parser.parse_args()
    CURATOR[0] = args.curator.resolve()
    problems = {p["id"]: p for p in _problems()}
    samples = make_samples(args.per_problem)
    with tempfile.TemporaryDirectory(prefix="peer-bcb-") as tmp:
        folder = Path(tmp)
        print(f"{len(samples)} samples on {len(problems)} seed problems, "
              f"{args.workers} workers each side")
        ours = run_curator(samples, args.workers, folder)
        print(f"curator samples eval: {ours['wall']:.1f} s", flush=True)
        if args.keep:
            shutil.copytree(folder, args.keep, dirs_exist_ok=True)
        if args.skip_bcb:
            print(f"curator ({CURATOR[0]}) samples eval: {ours['wall']:.1f} s, "
                  f"{1000 * ours['wall'] * args.workers / len(samples):.0f} ms/sample/worker, "
                  f"outcomes {ours['report'].get('outcomes')}")
            where_time_goes(ours, args.workers)
            return
        theirs = run_bcb(samples, problems, args.workers, folder)
    n = len(samples)
    print(f"\n{'harness':34s} {'wall s':>8s} {'ms/sample/worker':>17s}")
    print(f"{'BigCodeBench 0.2.5 untrusted_check':34s} {theirs['wall']:8.1f} "
          f"{1000 * theirs['wall'] * args.workers / n:17.0f}")
    print(f"{'curator samples eval':34s} {ours['wall']:8.1f} "
          f"{1000 * ours['wall'] * args.workers / n:17.0f}")
    print(f"ratio: {theirs['wall'] / ours['wall']:.1f}x")
    ours_pass = [r[2] == "passed" for r in ours["rows"]]
    theirs_pass = [r["stat"] == "pass" for r in theirs["results"]]
    if len(ours_pass) == len(theirs_pass):
        agree = sum(a == b for a, b in zip(ours_pass, theirs_pass))
        print(f"verdicts agree on {agree}/{n} samples (passed: curator {sum(ours_pass)}, "
              f"BigCodeBench {sum(theirs_pass)})")
    where_time_goes(ours, args.workers)
    bcb_times = [r["seconds"] for r in theirs["results"]]
    print(f"\nBigCodeBench per sample: median {1000 * statistics.median(bcb_times):.0f} ms "
          f"(a fresh process and a Manager per sample, torch imported in each)")


if __name__ == "__main__":
    main()
