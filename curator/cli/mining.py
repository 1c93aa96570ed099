"""mine, candidates list/show/accept/reject/vote/assign/stats, repo list/set-python."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.syntax import Syntax

from curator import llm
from curator.cli.context import (
    CliContext,
    interruptible,
    json_option,
    pass_ctx,
    print_json,
    progress_bar,
    rich_table,
    user_option,
)
from curator.errors import Cancelled, CuratorError
from curator.mining import promote
from curator.mining.mine import mine
from curator.panel import candidates as candidate_panel
from curator.repos import discover as discovery
from curator.repos import environments, identity
from curator.store import candidates as candidate_store
from curator.store.candidates import STATUSES


@click.command("mine")
@click.argument("source", required=False)
@click.option("--queued", is_flag=True,
              help="Mine every registered repository never mined (`discover --mine`).")
@click.option("--rev", help="Branch, tag or commit to mine (default: the default branch).")
@click.option("--with-tests/--all-candidates", "with_tests", default=None,
              help="Keep only functions some test exercises (default), or every function.")
@click.option("--name", help="OWNER/NAME to record the repository under (default: from "
                             "its remote URL).")
@json_option
@pass_ctx
def mine_cmd(ctx: CliContext, source: str | None, queued: bool, rev: str | None,
             with_tests: bool | None, name: str | None, as_json: bool) -> None:
    """Mine candidate functions and their tests from a git repository (URL or path).

    The repository is cloned or fetched into db/repos/ and every candidate is pinned to
    the resolved commit. Exit status 1 when some file could not be read or parsed.
    """
    if queued == bool(source):
        raise click.UsageError("give a SOURCE or --queued")
    if queued:
        _mine_queued(ctx, rev, with_tests, as_json)
        return
    with interruptible() as cancelled, progress_bar("mining", enabled=not as_json) as bar:
        try:
            report = mine(ctx.store, ctx.workspace, source, rev=rev, with_tests=with_tests,
                          progress=bar, cancelled=cancelled, name=name)
        except CuratorError:
            if cancelled():  # Ctrl-C also stops a git child (clone, fetch) with an error
                raise Cancelled("mining cancelled; nothing was written") from None
            raise
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        if report.already_mined:
            click.echo(f"{report.name} at {report.commit[:12]} was already mined: "
                       f"{report.candidates} candidate(s), nothing changed")
        else:
            rate = f"{report.files / report.seconds:.0f} files/s" if report.seconds else ""
            skipped = sum(report.skipped.values())
            click.echo(
                f"mined {report.name} at {report.commit[:12]} (licence {report.license}): "
                f"{report.files} Python files, {report.parsed} parsed, {skipped} skipped; "
                f"{report.candidates} candidate(s): {report.new} new, {report.updated} "
                f"updated, {report.vanished} vanished; {report.tests} tests in "
                f"{report.test_modules} test modules; {report.seconds:.1f} s ({rate})")
        for row in report.skipped_files:
            detail = f" ({row['detail']})" if row.get("detail") else ""
            click.echo(f"skipped: {row['path']}: {row['reason']}{detail}", err=True)
        for warning in report.warnings:
            click.echo(f"warning: {warning}", err=True)
    if not report.ok:
        sys.exit(1)


def _mine_queued(ctx: CliContext, rev: str | None, with_tests: bool | None,
                 as_json: bool) -> None:
    """Each queued repository in turn; one that fails is reported and the rest still run."""
    results, failed = [], 0
    for row in discovery.queued(ctx.store):
        try:
            report = mine(ctx.store, ctx.workspace, row["url"], rev=rev, with_tests=with_tests)
        except CuratorError as exc:
            failed += 1
            results.append({"url": row["url"], "error": str(exc)})
            click.echo(f"error: {row['url']}: {exc}", err=True)
            continue
        results.append({"url": row["url"], **report.to_json()})
        if not as_json:
            click.echo(f"mined {report.name} at {report.commit[:12]}: {report.candidates} "
                       "candidate(s)")
    if as_json:
        click.echo(json.dumps({"mined": results}, ensure_ascii=False))
    elif not results:
        click.echo("nothing queued (`curator discover ... --mine` queues repositories)")
    if failed:
        sys.exit(1)


@click.group("candidates")
def candidates_group() -> None:
    """Review mined candidates: list, show, accept as a draft problem, reject."""


@candidates_group.command("list")
@click.option("--min-score", type=float, help="Only candidates scoring at least X (0-1).")
@click.option("--status", type=click.Choice((*STATUSES, "all")), default="new",
              show_default=True)
@click.option("--repo", "repo", help="Only this repository (URL, path, name or id).")
@json_option
@pass_ctx
def candidates_list(ctx: CliContext, min_score: float | None, status: str, repo: str | None,
                    as_json: bool) -> None:
    """Candidates, highest DL-relevance score first."""
    repo_id = identity.find(ctx.store, repo)["id"] if repo else None
    rows = candidate_store.list_rows(ctx.store, min_score=min_score, status=status,
                                     repo_id=repo_id)
    votes = candidate_panel.tally(ctx.store)
    reviewers = candidate_panel.assigned_to(ctx.store)
    if as_json:
        print_json([{**candidate_store.to_json(r),
                     "votes": candidate_panel.votes_json(votes.get(r["id"]),
                                                         reviewers.get(r["id"]))}
                    for r in rows])
        return
    rich_table(["id", "score", "votes", "repo", "path", "qualname", "tests", "status"],
               [[r["id"], f"{r['score']:.2f}", candidate_panel.votes_text(votes.get(r["id"])),
                 r["repo_name"], f"{r['path']}:{r['line_start']}", r["qualname"],
                 len(r["tests"]), r["status"]] for r in rows],
               title=f"{len(rows)} candidate(s)")


@candidates_group.command("show")
@click.argument("cid")
@json_option
@pass_ctx
def candidates_show(ctx: CliContext, cid: str, as_json: bool) -> None:
    """One candidate with its source, evidence, tests and label suggestions."""
    row = candidate_store.get(ctx.store, cid)
    data = candidate_store.to_json(row, full=True)
    if as_json:
        print_json(data)
        return
    console = Console()
    console.rule(f"[bold]candidate {row['id']}[/] {row['qualname']} ({row['status']})")
    console.print(f"{row['repo_url']} @ {row['commit_sha']}  {row['path']}:{data['lines']}  "
                  f"licence {row['license']}  score {row['score']:.2f}")
    for item in row["evidence"]:
        console.print(f"  [dim]{item['kind']:>14}[/] {item['detail']} (+{item['weight']})")
    for node in row["tests"]:
        console.print(f"  [dim]{'test':>14}[/] {node}")
    for item in row["suggestions"]:
        console.print(f"  [dim]{'suggest':>14}[/] {item['axis']}={item['slug']}: "
                      f"{item['evidence']}")
    # Code is never cut: the source gets the width its longest line needs (a terminal
    # narrower than that wraps it; a pipe gets the whole lines).
    lines = row["source"].splitlines() or [""]
    gutter = len(str(row["line_start"] + len(lines))) + 3
    needed = max(len(line.expandtabs()) for line in lines) + gutter + 1
    Console(width=max(console.width, needed)).print(
        Syntax(row["source"], "python", line_numbers=True, start_line=row["line_start"]))


@candidates_group.command("accept")
@click.argument("cid")
@click.option("--id", "problem_id", help="Problem id (default: <repo>_<qualname>).")
@click.option("--exclude", "exclude", multiple=True, metavar="NODE_ID",
              help="Leave out this upstream test (one of the candidate's node ids, or a "
                   "test inside one); repeatable. Needs --exclude-reason.")
@click.option("--exclude-reason", metavar="TEXT",
              help="Why the --exclude tests are left out (e.g. 'needs --runslow', "
                   "'xfail upstream'); recorded with each.")
@click.option("--draft-with", "draft_with", metavar="MODEL",
              help="Also have MODEL draft the prompt (kept beside the docstring draft).")
@click.option("--base-url", help="OpenAI-compatible endpoint for --draft-with (default: "
                                 "curator.toml [llm] base_url).")
@click.option("--api-key-env", help="Environment variable holding the API key "
                                    "(default: [llm] api_key_env, else OPENAI_API_KEY).")
@json_option
@pass_ctx
def candidates_accept(ctx: CliContext, cid: str, problem_id: str | None,
                      exclude: tuple[str, ...], exclude_reason: str | None,
                      draft_with: str | None, base_url: str | None, api_key_env: str | None,
                      as_json: bool) -> None:
    """Create a draft repo-backed problem from a candidate."""
    if exclude and not (exclude_reason or "").strip():
        raise click.UsageError("--exclude needs --exclude-reason")
    excluded = {node: exclude_reason for node in exclude}
    if draft_with:
        client = llm.EndpointSettings.from_config(ctx.workspace.config).client(base_url,
                                                                               api_key_env)
        if client is None:
            raise click.UsageError("--draft-with needs --base-url (or curator.toml [llm] "
                                   "base_url)")
        result = promote.accept_with_draft(ctx.store, ctx.workspace, cid, client, draft_with,
                                           problem_id, exclude=excluded)
    else:
        result = promote.accept(ctx.store, ctx.workspace, cid, problem_id, exclude=excluded)
    failed = result.get("draft_refused") or result.get("draft_error")
    if as_json:
        print_json(result)
        if failed:
            sys.exit(1)
        return
    if failed:
        click.echo(f"error: {failed}", err=True)
    elif result.get("draft"):
        click.echo(f"{draft_with} drafted a prompt beside the docstring draft; choose with "
                   f"`curator problems drafts {result['problem_id']} --use SOURCE`")
    labels = ", ".join(f"{k}={v}" for k, v in result["suggested"].items())
    click.echo(f"candidate {result['candidate']} -> draft problem {result['problem_id']} "
               f"({result['path']}); suggested labels: {labels}")
    for item in result["excluded"]:
        click.echo(f"left out {item['node_id']}: {item['reason']}")
    if failed:
        sys.exit(1)


@candidates_group.command("reject")
@click.argument("cid")
@click.option("--reason", required=True, help="Why it is not a good problem.")
@json_option
@pass_ctx
def candidates_reject(ctx: CliContext, cid: str, reason: str, as_json: bool) -> None:
    """Reject a candidate, with a reason."""
    row = candidate_store.reject(ctx.store, cid, reason)
    if as_json:
        print_json(candidate_store.to_json(row))
        return
    click.echo(f"candidate {row['id']} rejected: {row['reason']}")


@candidates_group.command("vote")
@click.argument("cid")
@click.option("--relevant", required=True, type=click.Choice(("yes", "no")),
              help="Is it a deep-learning function worth a problem?")
@click.option("--reason", default="", help="Why (kept with the vote; a rejection lists them).")
@json_option
@user_option
@pass_ctx
def candidates_vote(ctx: CliContext, cid: str, relevant: str, reason: str,
                    as_json: bool) -> None:
    """Vote a candidate relevant or not; curator.toml's accept_when decides it."""
    result = candidate_panel.vote(ctx.store, ctx.workspace, cid, ctx.actor, relevant, reason)
    if as_json:
        print_json(result)
    else:
        counts = f"{result['yes']} yes / {result['no']} no, rule {result['rule']}"
        outcome = {"accepted": f"accepted as draft problem {result.get('problem_id')}",
                   "rejected": "rejected", "waiting": "waiting for votes",
                   "blocked": f"the rule holds but it cannot be promoted: {result.get('error')}"}
        click.echo(f"candidate {result['candidate']} ({result['reviewer']}: "
                   f"{result['relevant']}): {counts}; {outcome[result['decision']]}")
    if result["decision"] == "blocked":
        sys.exit(1)


@candidates_group.command("assign")
@click.option("--reviewers", required=True, help="Comma-separated names, e.g. ana,ben,cy.")
@click.option("--per-item", "per_item", type=int, default=3, show_default=True,
              help="Reviewers per candidate.")
@click.option("--min-score", type=float, help="Only candidates scoring at least X (0-1).")
@click.option("--seed", type=int, default=0, show_default=True)
@json_option
@pass_ctx
def candidates_assign(ctx: CliContext, reviewers: str, per_item: int, min_score: float | None,
                      seed: int, as_json: bool) -> None:
    """Give each new candidate to K reviewers, balanced."""
    result = candidate_panel.assign(ctx.store, reviewers.split(","), per_item,
                                    min_score=min_score, seed=seed)
    if as_json:
        print_json(result)
        return
    click.echo(f"{result['assigned']} candidate(s) assigned to {result['per_item']} "
               "reviewer(s) each; " + ", ".join(f"{a} {n}" for a, n in
                                                result["reviewers"].items()))


@candidates_group.command("stats")
@json_option
@pass_ctx
def candidates_stats(ctx: CliContext, as_json: bool) -> None:
    """Panel progress, decisions and agreement on relevance (alpha, kappa)."""
    data = candidate_panel.stats(ctx.store, candidate_panel.rule_for(ctx.workspace))
    if as_json:
        print_json(data)
        return
    d = data["decisions"]
    click.echo(f"{data['candidates']} candidate(s) before the panel (rule {data['rule']}): "
               f"{d['accepted']} accepted, {d['rejected']} rejected, {d['waiting']} waiting")
    rich_table(["reviewer", "assigned", "done", "votes"],
               [[a, p["assigned"], p["done"], p["votes"]] for a, p in data["reviewers"].items()],
               title="progress")
    agreement = data["agreement"]
    alpha = agreement["alpha"]
    click.echo(f"relevance: Krippendorff's alpha {'n/a' if alpha is None else f'{alpha:.3f}'} "
               f"on {agreement['items']} candidate(s) with two or more votes")
    for pair, kappa in agreement["kappa"].items():
        click.echo(f"  Cohen's kappa {pair.replace('|', ' / ')}: "
                   f"{'n/a' if kappa is None else f'{kappa:.3f}'}")


@click.group("repo")
def repo_group() -> None:
    """Mined repositories and how their tests run."""


@repo_group.command("list")
@json_option
@pass_ctx
def repo_list(ctx: CliContext, as_json: bool) -> None:
    """Mined repositories with their licence, last commit and interpreter."""
    rows = identity.list_rows(ctx.store)
    if as_json:
        print_json([{"id": r["id"], "url": r["url"], "name": r["name"],
                     "license": r["license"], "python": r["python"],
                     "last_commit": r["last_commit"], "candidates": r["candidates"]}
                    for r in rows])
        return
    rich_table(["id", "name", "licence", "last commit", "candidates", "python", "url"],
               [[r["id"], r["name"], r["license"], (r["last_commit"] or "")[:12],
                 r["candidates"], r["python"] or "(curator's own)", r["url"]] for r in rows])


@repo_group.command("set-python")
@click.argument("repo")
@click.argument("path")
@json_option
@pass_ctx
def repo_set_python(ctx: CliContext, repo: str, path: str, as_json: bool) -> None:
    """Run REPO's tests with the interpreter PATH (`default`: the curator's own)."""
    row = identity.set_python(ctx.store, repo, None if path == "default" else path)
    if as_json:
        print_json({"id": row["id"], "url": row["url"], "name": row["name"],
                    "python": row["python"]})
        return
    click.echo(f"{row['name']}: tests run with {row['python'] or sys.executable}")


@repo_group.command("env")
@click.argument("repo")
@click.option("--python", "python", metavar="X.Y",
              help="Python version of the environment (default: the curator's own).")
@click.option("--extra", "extras", multiple=True, metavar="PKG",
              help="Another requirement to install (repeatable).")
@click.option("--lock", "lock_file", type=click.Path(dir_okay=False, exists=True),
              help="Install exactly this lock (e.g. from a release bundle) instead of "
                   "resolving.")
@click.option("--rebuild", is_flag=True, help="Build again even when nothing changed.")
@json_option
@pass_ctx
def repo_env(ctx: CliContext, repo: str, python: str | None, extras: tuple[str, ...],
             lock_file: str | None, rebuild: bool, as_json: bool) -> None:
    """Build (or reuse) an isolated environment for REPO at its pinned commit and run its
    tests with it: its declared runtime and test dependencies, pytest, the curator's torch
    version (and the companions built for it), and the repository itself (from the pinned
    checkout, without dependencies). Reads the recipe repos/OWNER__NAME.toml (written
    first when missing); the environment counts only when its framework and the
    repository import in it."""
    lock = None
    if lock_file:
        lock = Path(lock_file).read_text(encoding="utf-8")
    with progress_bar("environment", enabled=not as_json) as bar:
        report = environments.build(ctx.store, ctx.workspace, repo, python=python,
                            extras=list(extras), lock=lock, progress=bar, force=rebuild)
    if as_json:
        print_json(report.to_json())
        if not report.ok:
            sys.exit(1)
        return
    if report.recipe_written:
        click.echo(f"recipe written: {report.recipe} (review it and commit it)")
    for line in report.notes:
        click.echo(f"note: {line}")
    if report.missing:
        shown = ", ".join(report.missing[:5]) + (" ..." if len(report.missing) > 5 else "")
        click.echo(f"warning: {len(report.missing)} path(s) missing from the clone (their "
                   f"git objects are absent): {shown}; the tests that need them fail",
                   err=True)
    how = "reused" if report.reused else "built"
    if not report.ok:
        how = "reused (broken)" if report.reused else "set up but broken"
    click.echo(f"{report.repo}: environment {how} in {report.seconds:.1f} s at {report.path}")
    click.echo(f"python {report.python_version}: {report.python}")
    click.echo(f"{len(report.packages)} package(s): " + ", ".join(
        f"{p['name']}=={p['version']}" for p in report.packages))
    for item in report.skipped:
        click.echo(f"left out {item['requirement']}: {item['reason']}", err=True)
    if report.repo_installed:
        click.echo(f"warning: the repository itself was not installed ({report.repo_installed})"
                   "; runs still import it from the checkout", err=True)
    if not report.ok:
        click.echo(f"error: {report.repo}: the environment is not usable: {report.reason}; "
                   f"fix the recipe {report.recipe} (overrides, python, build) and run "
                   "`curator repo env` again", err=True)
        sys.exit(1)


COMMANDS = [mine_cmd, candidates_group, repo_group]
