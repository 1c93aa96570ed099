"""release check/build/verify/diff, import-release."""

from __future__ import annotations

import sys

import click

from curator.cli.context import CliContext, json_option, pass_ctx, print_json, progress_bar
from curator.cli.dlbench import print_import
from curator.errors import WorkspaceError
from curator.limits import DEFAULT
from curator.release import bundle as bundle_mod
from curator.release import diff as diff_mod
from curator.release import gates, importing
from curator.release import verify as verify_mod


@click.group("release")
def release_group() -> None:
    """Check release gates, build, verify and diff release bundles."""


@release_group.command("check")
@json_option
@pass_ctx
def check_cmd(ctx: CliContext, as_json: bool) -> None:
    """List every problem that fails a release gate; exit 1 if a ready one does."""
    with progress_bar("checking", enabled=not as_json) as bar:
        report = gates.check(ctx.store, ctx.workspace, progress=bar)
    data = report.to_json()
    if as_json:
        print_json(data)
    else:
        for gate in data["gates"]:
            mark = "ok" if not gate["failing"] else f"{len(gate['failing'])} failing"
            click.echo(f"{gate['gate']:<20} {mark:<12} {gate['description']}")
            for item in gate["failing"]:
                click.echo(f"  {item['problem_id']} [{item['status']}]: {item['reason']}")
        blocking = data["blocking"]
        click.echo(f"{data['checked']} problem(s) checked; "
                   + (f"{len(blocking)} ready/released problem(s) fail a gate"
                      if blocking else "every ready/released problem passes every gate"))
    if not report.ok:
        sys.exit(1)


@release_group.command("build")
@click.option("--version", "version", required=True, help="Release version, X.Y.Z.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Folder to write the bundle into (empty, new, or an older bundle).")
@click.option("--name", help="Bundle name (default: [release] name, else dl-bench).")
@click.option("--allow-failing", is_flag=True,
              help="Build even when problems fail a gate (the manifest lists them).")
@json_option
@pass_ctx
def build_cmd(ctx: CliContext, version: str, out: str, name: str | None, allow_failing: bool,
              as_json: bool) -> None:
    """Build NAME-X.Y.Z from the ready and released problems into OUT."""
    with progress_bar("building", enabled=not as_json) as bar:
        report = bundle_mod.build(ctx.store, ctx.workspace, version, out, name=name,
                                  allow_failing=allow_failing, progress=bar)
    if as_json:
        print_json(report.to_json())
        return
    click.echo(f"{report.name} {report.version}: {report.problems} problem(s) -> "
               f"{report.archive}")
    click.echo(f"sha256 {report.archive_sha256}")
    if report.failing:
        click.echo(f"warning: built with {len({f['problem_id'] for f in report.failing})} "
                   "problem(s) failing a gate (--allow-failing)", err=True)
    if report.released:
        click.echo(f"{len(report.released)} problem(s) marked released")


@release_group.command("verify")
@click.argument("bundle", type=click.Path(exists=True))
@click.option("--rerun", is_flag=True, help="Run every canonical solution against its tests.")
@click.option("--workers", type=int, default=2, show_default=True,
              help="Parallel runs with --rerun.")
@json_option
@pass_ctx
def verify_cmd(ctx: CliContext, bundle: str, rerun: bool, workers: int, as_json: bool) -> None:
    """Check a bundle (folder or .tar.gz) against its manifest and schema."""
    store = workspace = None
    try:
        limits = ctx.workspace.limits
    except WorkspaceError:
        limits = DEFAULT  # verifying a bundle needs no workspace
    if rerun:
        try:
            workspace, store = ctx.workspace, ctx.store
        except WorkspaceError:
            pass  # self-contained problems re-run without a workspace
    with progress_bar("re-running", enabled=rerun and not as_json) as bar:
        report = verify_mod.verify(bundle, rerun=rerun, workers=workers, progress=bar,
                                   store=store, workspace=workspace, limits=limits)
    if as_json:
        print_json(report.to_json())
    else:
        for issue in report.issues:
            click.echo(f"error: {issue}", err=True)
        click.echo(report.summary())
    if not report.ok:
        sys.exit(1)


@release_group.command("diff")
@click.argument("old", type=click.Path(exists=True))
@click.argument("new", type=click.Path(exists=True))
@json_option
def diff_cmd(old: str, new: str, as_json: bool) -> None:
    """Problems added, removed and changed between two bundles (a changelog)."""
    result = diff_mod.diff(old, new)
    if as_json:
        print_json(result.to_json())
    else:
        click.echo(result.markdown(), nl=False)


@click.command("import-release")
@click.argument("bundle", type=click.Path(exists=True))
@click.option("--dry-run", is_flag=True, help="Report what would be imported; write nothing.")
@json_option
@pass_ctx
def import_release_cmd(ctx: CliContext, bundle: str, dry_run: bool, as_json: bool) -> None:
    """Read one of our release bundles back into this workspace."""
    with progress_bar("importing", enabled=not as_json) as bar:
        report = importing.import_release(ctx.store, ctx.workspace, bundle, dry_run=dry_run,
                                          progress=bar)
    print_import(report, as_json)


COMMANDS = [release_group, import_release_cmd]
