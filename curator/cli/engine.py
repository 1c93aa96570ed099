"""run (reference solutions against their tests, in the sandbox) and doctor."""

from __future__ import annotations

import sys
from collections import Counter

import click

from curator import runs
from curator.cli.context import (
    CliContext,
    json_option,
    pass_ctx,
    print_json,
    progress_bar,
    rich_table,
)
from curator.display import visible
from curator.errors import CuratorError
from curator.execution import doctor
from curator.repos import checkout, environments, importcheck
from curator.store import problems as problem_store


def allow_weak_option(func):
    """--allow-weak: consent to run untrusted code (samples, mined or imported problems)
    without the sandbox when isolation is weak."""
    return click.option("--allow-weak", "allow_weak", is_flag=True, default=None,
                        help="Run untrusted code (LLM samples, mined or imported problems) "
                             "even when isolation is weak (no working bubblewrap); also "
                             "[execution] allow_weak = true. References you wrote never "
                             "need it.")(func)


def backend_options(func):
    """--backend local|ray and --address, shared by `run` and `samples eval`."""
    func = click.option("--address", metavar="ADDR",
                        help="Ray cluster to use: host:port, ray://host:port or auto "
                             "(implies --backend ray; default: [execution] address, else "
                             "a new local Ray instance).")(func)
    return click.option("--backend", type=click.Choice(["local", "ray"]),
                        help="Where runs execute (default: [execution] backend, else "
                             "local). With ray, --workers is per node (default: its "
                             "CPUs).")(func)


def cluster_line(cluster: dict) -> str:
    """One line about a cluster run: nodes, throughput, per-node counts, retries."""
    nodes = ", ".join(f"{label} {n['done']}" for label, n in sorted(cluster["nodes"].items()))
    line = (f"ray: {len(cluster['nodes'])} node(s), {cluster['done']} run(s) at "
            f"{cluster['runs_per_s']:.1f} runs/s ({nodes})")
    if cluster.get("retried"):
        line += f"; {cluster['retried']} retried after {cluster['lost_runners']} lost runner(s)"
    return line


def check_ids(ctx: CliContext, ids: tuple[str, ...], run_all: bool) -> None:
    """Problem ids or --all, never both, and every id a problem: a usage error otherwise."""
    if run_all and ids:
        raise click.UsageError("give problem ids or --all, not both")
    if not run_all and not ids:
        raise click.UsageError("give problem ids or --all")
    unknown = [pid for pid in ids if not problem_store.exists(ctx.store, pid)]
    if unknown:
        raise click.UsageError(f"no such problem: {', '.join(unknown)}")


@click.command("run")
@click.argument("ids", nargs=-1)
@click.option("--all", "run_all", is_flag=True, help="Run every problem.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel warm workers (default: CPU count).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="Wall-clock limit per run in seconds (default: max(floor, k x the "
                   "reference's measured time)).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Run each problem N times; differing outcomes flag it flaky.")
@click.option("--resume", is_flag=True,
              help="Only top up: count the runs each current reference already has (not "
                   "infra) towards --repeat, e.g. to finish an interrupted run.")
@backend_options
@allow_weak_option
@json_option
@pass_ctx
def run_cmd(ctx: CliContext, ids: tuple[str, ...], run_all: bool, workers: int | None,
            timeout: float | None, repeat: int, resume: bool, backend: str | None,
            address: str | None, allow_weak: bool | None, as_json: bool) -> None:
    """Run reference solutions against their tests and record each run."""
    check_ids(ctx, ids, run_all)
    with progress_bar("running", enabled=not as_json) as bar:
        report = runs.run_problems(ctx.store, ctx.workspace, list(ids) if ids else None,
                                   workers=workers, timeout=timeout, repeat=repeat,
                                   progress=bar, backend=backend, address=address,
                                   resume=resume, allow_weak=allow_weak)
    if as_json:
        print_json(report.to_json())
    else:
        _print_report(report)
    sys.exit(0 if report.all_passed else 1)


def _print_report(report) -> None:
    rows = []
    for run in report.runs:
        passed = sum(t["outcome"] == "passed" for t in run["tests"])
        others = Counter(t["outcome"] for t in run["tests"]
                         if t["outcome"] in ("skipped", "xfailed", "xpassed", "deselected"))
        shown = f"{passed}/{len(run['tests'])}" + "".join(
            f" {n} {o}" for o, n in sorted(others.items()))
        rows.append([run["problem_id"], run["outcome"], f"{run['duration_s']:.2f}s",
                     shown, visible(run["reason"], False)[:100]])
    if rows:
        rich_table(["problem", "outcome", "time", "tests", "reason"], rows)
    summary = report.summary()
    outcomes = ", ".join(f"{n} {o}" for o, n in summary["outcomes"].items()) or "nothing run"
    click.echo(f"{summary['runs']} run(s) of {summary['problems']} problem(s): {outcomes}")
    if summary["flaky"]:
        click.echo(f"flaky: {', '.join(summary['flaky'])}")
    if summary["skipped"]:
        click.echo(f"{summary['skipped']} run(s) skipped: already recorded (--resume)")
    if report.cluster:
        click.echo(cluster_line(report.cluster))
    if summary["isolation"] == "weak":
        click.echo("warning: isolation is weak (no working bubblewrap); "
                   "see `curator doctor`", err=True)


@click.command("doctor")
@json_option
@pass_ctx
def doctor_cmd(ctx: CliContext, as_json: bool) -> None:
    """Report the isolation level runs get here and what is missing for the strong one."""
    requested = "auto"
    try:
        requested = ctx.workspace.config.execution.isolation
    except CuratorError:
        pass  # doctor works outside a workspace too
    report = doctor.report(requested)
    report["repo_envs"] = _repo_envs(ctx)
    if as_json:
        print_json(report)
        return
    click.echo(f"isolation: {report['isolation']}")
    for check in report["checks"]:
        mark = "ok " if check["ok"] else "!! "
        click.echo(f"  {mark}{check['check']}: {check['detail']}")
    for item in report["missing"]:
        click.echo(f"missing: {item}")
    for env in report["repo_envs"]:
        mark = "ok " if env["imports"] else "!! "
        click.echo(f"  {mark}repo env {env['repo']} ({env['commit'][:12]}, "
                   f"{env['packages']} packages): {env['detail']}")


def _repo_envs(ctx: CliContext) -> list[dict]:
    """Repository environments and whether each imports its package (empty without a
    workspace)."""
    try:
        store = ctx.store
    except CuratorError:
        return []
    out = []
    for row in environments.list_envs(store):
        tree = checkout.worktree_path(ctx.workspace, row["repo_url"], row["commit_sha"])
        ok, detail = importcheck.check_import(row, ctx.workspace.config.execution, tree)
        if row.get("status") == "broken":   # the check made when it was built
            ok, detail = False, row.get("reason") or "broken"
        out.append({"repo": row["repo_name"], "python": row["python"],
                    "commit": row["commit_sha"], "package": row["package"],
                    "packages": len(row["packages"]), "imports": ok, "detail": detail,
                    "registered": row["registered"] == row["python"]})
    return out


COMMANDS = [run_cmd, doctor_cmd]
