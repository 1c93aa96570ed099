"""validate: do the problems' tests catch wrong answers (stub, repeats, mutants); repair."""

from __future__ import annotations

import sys

import click

from curator.cli.context import (
    CliContext,
    interruptible,
    json_option,
    pass_ctx,
    print_json,
    progress_bar,
    rich_table,
)
from curator.cli.engine import allow_weak_option, check_ids
from curator.store import problems as problem_store
from curator.validity import repair
from curator.validity.validate import DEFAULT_MUTANTS, DEFAULT_REPEAT, validate


def _share(value) -> str:
    return "-" if value is None else f"{value:.2f}"


@click.command("validate")
@click.argument("ids", nargs=-1)
@click.option("--all", "run_all", is_flag=True, help="Validate every problem not retired.")
@click.option("--mutants", type=click.IntRange(min=0), default=DEFAULT_MUTANTS,
              show_default=True, help="Mutants of each reference to run (0: none).")
@click.option("--repeat", type=click.IntRange(min=1), default=DEFAULT_REPEAT,
              show_default=True, help="Runs of each reference; differing tests are flaky.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Parallel warm workers (default: [execution] workers, else CPUs).")
@click.option("--repair", "do_repair", is_flag=True,
              help="For problems whose node ids do not all exercise them, propose the "
                   "tests the mining index links to the symbol (tried on the reference "
                   "and the stub).")
@click.option("--apply", "do_apply", is_flag=True,
              help="Save the proposed node ids (implies --repair).")
@allow_weak_option
@json_option
@pass_ctx
def validate_cmd(ctx: CliContext, ids: tuple[str, ...], run_all: bool, mutants: int,
                 repeat: int, workers: int | None, do_repair: bool, do_apply: bool,
                 allow_weak: bool | None, as_json: bool) -> None:
    """Check that each problem's tests fail a stub of its entry point, that the reference
    is stable, and how many mutants of it the tests kill. Exit 1 when a problem's tests
    do not discriminate or its reference is flaky."""
    check_ids(ctx, ids, run_all)
    with interruptible() as stop, progress_bar("validating", enabled=not as_json) as bar:
        report = validate(ctx.store, ctx.workspace, list(ids) if ids else None,
                          mutants=mutants, repeat=repeat, workers=workers, progress=bar,
                          cancelled=stop, allow_weak=allow_weak)
        proposals = []
        if (do_repair or do_apply) and not report.cancelled:
            wanted = [v.id for v in report.problems if v.non_exercising_tests]
            problems = [problem_store.get(ctx.store, pid) for pid in wanted]
            problems = [p for p in problems if p.test_node_ids is not None]
            with progress_bar("repairing", enabled=not as_json) as rbar:
                proposals = repair.propose(ctx.store, ctx.workspace, problems,
                                           workers=workers, progress=rbar, cancelled=stop,
                                           allow_weak=allow_weak)
            if do_apply:
                for proposal in proposals:
                    if proposal.fixes and proposal.changes:
                        repair.apply(ctx.store, ctx.workspace, proposal)
    data = report.to_json()
    if do_repair or do_apply:
        data["repairs"] = [p.to_json() for p in proposals]
    if as_json:
        print_json(data)
    else:
        _print(report, proposals)
    bad = [v for v in report.problems if v.discriminates is False or v.stable is False]
    if report.cancelled:
        sys.exit(130)
    sys.exit(1 if bad else 0)


def _print(report, proposals) -> None:
    rows = []
    for v in report.problems:
        if v.discriminates is None:
            rows.append([v.id, "-", "-", "-", "-", v.reason or ""])
            continue
        score = "-" if v.mutation_score is None else \
            f"{v.mutation_score:.2f} ({v.killed}/{v.mutants})"
        notes = []
        if v.non_exercising_tests:
            notes.append(f"{len(v.non_exercising_tests)} test(s) the stub passes")
        if v.flaky_tests:
            notes.append(f"flaky: {', '.join(v.flaky_tests[:3])}")
        if v.timeouts or v.equivalent:
            notes.append(f"{v.timeouts} mutant(s) timed out, {v.equivalent} equivalent")
        if v.reused:
            notes.append("unchanged since last validated")
        rows.append([v.id, "yes" if v.discriminates else "NO", _share(v.stub_failed_share),
                     "yes" if v.stable else "NO", score, "; ".join(notes)])
    if rows:
        rich_table(["problem", "discriminates", "stub fails", "stable", "mutation score",
                    "notes"], rows)
    summary = report.summary()
    click.echo(f"{summary['problems']} problem(s): {summary['not_discriminating']} do not "
               f"discriminate, {summary['unstable']} unstable, {summary['undecided']} "
               f"undecided; {summary['runs']} run(s) ({summary['mutant_runs']} mutants) in "
               f"{summary['seconds']:.1f}s")
    for p in proposals:
        if p.fixes:
            verb = "applied" if p.applied else "proposed"
            via = f" via {' -> '.join(p.via)}" if p.via else ""
            click.echo(f"{p.id}: {verb} {len(p.proposed)} node id(s) ({p.link} link{via}); "
                       f"+{len(p.added)} -{len(p.dropped)}")
        else:
            click.echo(f"{p.id}: no repair ({p.reason})")
    if report.isolation == "weak":
        click.echo("warning: isolation is weak (no working bubblewrap); see `curator doctor`",
                   err=True)


COMMANDS = [validate_cmd]
