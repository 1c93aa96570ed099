"""dlbench resolve: imported DL-Bench problems -> pinned, runnable repo-backed drafts."""

from __future__ import annotations

import click

from curator.cli.context import CliContext, json_option, pass_ctx, print_json, progress_bar
from curator.errors import CuratorError
from curator.release import resolve as resolve_mod


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


COMMANDS = [dlbench_group]
