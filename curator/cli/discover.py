"""discover: repositories from GitHub's search API, by topic and stars."""

from __future__ import annotations

import sys

import click

from curator.cli.context import (
    CliContext,
    json_option,
    pass_ctx,
    print_json,
    progress_bar,
    rich_table,
)
from curator.repos import discover as discovery


@click.command("discover")
@click.option("--topic", "topics", multiple=True, metavar="TOPIC",
              help="GitHub topic the repositories must have (repeatable: all of them).")
@click.option("--min-stars", type=click.IntRange(min=0), help="At least this many stars.")
@click.option("--language", help="Main language, e.g. Python.")
@click.option("--limit", type=click.IntRange(min=1, max=discovery.SEARCH_CAP), default=50,
              show_default=True, help="Repositories to list (most stars first).")
@click.option("--api-url", help="GitHub's REST API root (default: curator.toml [discover] "
                                "api_url, else https://api.github.com; a GitHub Enterprise "
                                "server's /api/v3).")
@click.option("--no-tests-check", "check_tests", flag_value=False, default=True,
              help="Skip the per-repository test lookup (saves requests).")
@click.option("--mine", "queue", is_flag=True,
              help="Queue the listed repositories that have tests for `curator mine "
                   "--queued`.")
@json_option
@pass_ctx
def discover_cmd(ctx: CliContext, topics: tuple[str, ...], min_stars: int | None,
                 language: str | None, limit: int, api_url: str, check_tests: bool,
                 queue: bool, as_json: bool) -> None:
    """List GitHub repositories by topic and stars, with licence, last push and tests.

    GITHUB_TOKEN is sent when set; without it the anonymous rate limit applies (60
    requests an hour), which the output reports.
    """
    api_url = api_url or ctx.workspace.config.discover.api_url
    with progress_bar("discovering", enabled=not as_json) as bar:
        report = discovery.discover(list(topics), min_stars, language, limit, api_url,
                                    check_tests=check_tests, progress=bar)
    if queue:
        chosen = [r.full_name for r in report.repositories if r.has_tests is not False]
        discovery.queue_for_mining(ctx.store, chosen, discovery.web_url(api_url))
        report.queued = chosen
    for note in report.notes():
        click.echo(f"note: {note}", err=True)
    if as_json:
        print_json(report.to_json())
    else:
        def tests(value):
            return {True: "yes", False: "no", None: "?"}[value]

        rich_table(["repository", "stars", "licence", "last push", "tests", "topics"],
                   [[r.full_name, r.stars, r.license or "?", (r.pushed_at or "")[:10],
                     tests(r.has_tests), ", ".join(r.topics[:4])]
                    for r in report.repositories],
                   title=f"{len(report.repositories)} of {report.total_count} repositories "
                         f"({report.requests} requests, {report.rate_limit.remaining} left)")
        if report.queued:
            click.echo(f"queued {len(report.queued)} repositories for `curator mine --queued`")
    if report.stopped:
        sys.exit(1)


COMMANDS = [discover_cmd]
