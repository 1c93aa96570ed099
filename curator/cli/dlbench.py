"""dlbench import | resolve | taxonomy: DL-Bench's release, its upstream repositories and
its Taxonomy-Data (`import-dlbench` and `samples import --format dlbench-taxonomy` are
aliases that say where the command now lives)."""

from __future__ import annotations

import sys
from contextlib import contextmanager

import click

from curator.cli.context import (
    CliContext,
    interruptible,
    json_option,
    pass_ctx,
    print_json,
    progress_bar,
)
from curator.cli.samples import import_taxonomy
from curator.dlbench import importer, rebuild
from curator.dlbench import resolve as resolve_mod
from curator.errors import CuratorError
from curator.limits import one_line


@click.group("dlbench")
def dlbench_group() -> None:
    """Work with problems imported from the original DL-Bench release."""


@dlbench_group.command("resolve")
@click.option("--repo", "repos", multiple=True, metavar="NAME=SOURCE",
              help="Register repository NAME from SOURCE (URL, local clone or bare mirror; "
                   "a local source never uses the network). Repeatable.")
@click.option("--as-of", "as_of", metavar="DATE",
              help="Pin the last commit on the default branch before DATE (YYYY-MM-DD).")
@click.option("--rev", "revs", multiple=True, metavar="NAME=REV",
              help="Pin repository NAME at REV (tag, branch or SHA). Repeatable.")
@json_option
@pass_ctx
def resolve_cmd(ctx: CliContext, repos: tuple[str, ...], as_of: str | None,
                revs: tuple[str, ...], as_json: bool) -> None:
    """Pin a commit, extract the reference and the test node ids of imported problems."""
    sources = resolve_mod.parse_assignments(repos, "--repo", "NAME=SOURCE")
    pinned = resolve_mod.parse_assignments(revs, "--rev", "NAME=REV")
    if as_of and pinned and set(pinned) >= set(sources):
        raise CuratorError("--as-of and --rev pin the same repositories; give one of them")
    with progress_bar("resolving", enabled=not as_json) as bar:
        report = resolve_mod.resolve(ctx.store, ctx.workspace, sources, as_of=as_of,
                                     revs=pinned, progress=bar)
    if as_json:
        print_json({"resolved": report.resolved, "unresolved": report.unresolved})
        return
    for repo in report.repos:
        when = f" (as of {repo['as_of']})" if repo["as_of"] else ""
        click.echo(f"{repo['name']}: {repo['commit'][:12]}{when}, license {repo['license']}")
    for item in report.notes:
        click.echo(f"note {item['id']}: {item['note']}" if item["id"] else
                   f"note: {item['note']}", err=True)
    for item in report.unresolved:
        click.echo(f"unresolved {item['id']}: {item['reason']}", err=True)
    click.echo(f"resolved {len(report.resolved)} problem(s), {len(report.unresolved)} "
               "unresolved")


@dlbench_group.command("rebuild")
@click.option("--repo", "repos", multiple=True, metavar="NAME=SOURCE",
              help="Register repository NAME from SOURCE (URL, local clone or bare mirror). "
                   "Repeatable.")
@click.option("--as-of", "as_of", metavar="DATE",
              help="Pin each repository at its last commit before DATE (YYYY-MM-DD) and "
                   "resolve its requirements as of that day.")
@click.option("--only", "only", multiple=True, metavar="NAME",
              help="Only this DL-Bench repository (repeatable; default: every registered "
                   "one with imported problems).")
@json_option
@pass_ctx
def rebuild_cmd(ctx: CliContext, repos: tuple[str, ...], as_of: str | None,
                only: tuple[str, ...], as_json: bool) -> None:
    """Resolve, build the environment of, and triage the references of every repository
    with imported DL-Bench problems; resumes where it stopped."""
    sources = resolve_mod.parse_assignments(repos, "--repo", "NAME=SOURCE")
    if as_of:
        as_of = resolve_mod.check_date(as_of)
    with interruptible() as cancelled, repo_lines(enabled=not as_json) as note:
        report = rebuild.rebuild(ctx.store, ctx.workspace, sources, as_of=as_of,
                                 only=list(only), progress=note, cancelled=cancelled)
    if as_json:
        print_json(report.to_json())
        return
    for repo in report.repos:
        causes = ", ".join(f"{n} {c}" for c, n in repo.triaged.items() if n) or "none"
        click.echo(f"{repo.name}: {repo.resolved}/{repo.problems} resolved, env "
                   f"{repo.env}, {repo.green} green; excluded tests: {causes}")
        for item in repo.not_green:
            click.echo(one_line(f"  not green {item['id']}: {item['reason']}"), err=True)
    totals = report.to_json()["totals"]
    click.echo(f"{totals['green']} green of {totals['resolved']} resolved of "
               f"{totals['problems']} problem(s)")


@contextmanager
def repo_lines(enabled: bool = True):
    """One progress line per repository on a terminal: what it is doing, N/M."""
    if not enabled or not sys.stderr.isatty():
        yield lambda name, what, done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[label]}"), console=Console(stderr=True)) as bar:
        tasks: dict[str, int] = {}

        def update(name: str, what: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=None, label="")
            bar.update(tasks[name], completed=done, total=total or None, label=what[:70])

        yield update


def _already(item: dict) -> bool:
    return item["reason"].startswith("already") or ": already present" in item["reason"]


def print_import(report: importer.ImportReport, as_json: bool) -> None:
    """The report; exit status 1 when a bad item was skipped (not one already imported)."""
    bad = [item for item in report.skipped if not _already(item)]
    if as_json:
        print_json(report.to_json())
        if bad:
            sys.exit(1)
        return
    for item in report.skipped:
        if _already(item):
            click.echo(one_line(f"skipped {item['file']}: {item['reason']}"), err=True)
        else:
            click.echo(one_line(f"error: {item['file']}: {item['reason']}"), err=True)
    for item in report.unknown_labels:
        click.echo(f"unknown {item['axis']} label {item['value']!r} in {item['file']} "
                   f"(problem {item['problem_id']})", err=True)
    verb = "would import" if report.dry_run else "imported"
    drafts = f" ({report.drafts} missing something, see flags)" if report.drafts else ""
    click.echo(f"{verb} {len(report.problems)} problem(s){drafts}, skipped "
               f"{len(report.skipped)}, {len(report.unknown_labels)} unknown label spelling(s)")
    if bad:
        sys.exit(1)


@dlbench_group.command("import")
@click.argument("path", type=click.Path(exists=True))
@click.option("--dry-run", is_flag=True, help="Report what would be imported; write nothing.")
@json_option
@pass_ctx
def import_cmd(ctx: CliContext, path: str, dry_run: bool, as_json: bool) -> None:
    """Import the original DL-Bench release (.txt folder/tarball, or CSV) as drafts."""
    with progress_bar("importing", enabled=not as_json) as bar:
        report = importer.import_dlbench(ctx.store, ctx.workspace, path, dry_run=dry_run,
                                          progress=bar)
    print_import(report, as_json)


@click.command("import-dlbench", hidden=True)
@click.argument("path", type=click.Path(exists=True))
@click.option("--dry-run", is_flag=True, help="Report what would be imported; write nothing.")
@json_option
@click.pass_context
def import_dlbench_alias(click_ctx: click.Context, path: str, dry_run: bool,
                         as_json: bool) -> None:
    """Alias of `curator dlbench import` (where the command now lives)."""
    click.echo("note: `curator import-dlbench` is now `curator dlbench import`", err=True)
    click_ctx.invoke(import_cmd, path=path, dry_run=dry_run, as_json=as_json)


@dlbench_group.command("taxonomy")
@click.argument("folders", nargs=-1, required=True, type=click.Path())
@click.option("--model", required=True, help="Model name the Taxonomy-Data samples are from.")
@click.option("--technique", help="Prompting technique of those samples.")
@json_option
@pass_ctx
def taxonomy_cmd(ctx: CliContext, folders: tuple[str, ...], model: str, technique: str | None,
                 as_json: bool) -> None:
    """Import DL-Bench's Taxonomy-Data folder: samples with the outcomes DL-Bench recorded."""
    import_taxonomy(ctx, folders, model, technique, as_json)


COMMANDS = [dlbench_group, import_dlbench_alias]
