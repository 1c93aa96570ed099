"""init, load, dump, problems list/show/new/set."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape
from rich.syntax import Syntax

from curator import llm, problem_template, sync, workspace
from curator.cli.context import (
    CliContext,
    json_option,
    pass_ctx,
    print_json,
    progress_bar,
    rich_table,
)
from curator.labels import AXES, DATA, STAGES, TASKS
from curator.mining import prompt_drafts
from curator.panel import rounds
from curator.problem import STATUSES
from curator.store import problem_imports as import_store
from curator.store import problems as problem_store


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@json_option
@pass_ctx
def init_cmd(ctx: CliContext, directory: str, as_json: bool) -> None:
    """Create a workspace: DIRECTORY/problems, DIRECTORY/db and its database."""
    ws = workspace.init(directory)
    ctx.workspace_opt = str(ws.root)
    ctx._workspace = workspace.discover(ws.root, ctx.db_opt)
    store = ctx.store
    if as_json:
        print_json({"workspace": str(ws.root), "db": str(store.path)})
    else:
        click.echo(f"workspace ready at {ws.root} (database {store.path})")


@click.command("load")
@json_option
@click.option("--quiet", is_flag=True, help="Print only errors.")
@pass_ctx
def load_cmd(ctx: CliContext, as_json: bool, quiet: bool) -> None:
    """Read problems/ into the database (valid problems load even when others fail)."""
    with progress_bar("loading", enabled=not as_json and not quiet) as bar:
        report = sync.load(ctx.store, ctx.workspace.problems_dir, progress=bar,
                           limit=ctx.workspace.limits.file_bytes)
    if as_json:
        print_json(report.to_json())
    else:
        for error in report.errors:
            click.echo(f"error: {error['path']}: {error['message']}", err=True)
        if not quiet:
            click.echo(f"{len(report.loaded)} loaded, {len(report.unchanged)} unchanged, "
                       f"{len(report.errors)} error(s)")
    if report.errors:
        sys.exit(1)


@click.command("dump")
@click.argument("ids", nargs=-1)
@json_option
@pass_ctx
def dump_cmd(ctx: CliContext, ids: tuple[str, ...], as_json: bool) -> None:
    """Write problems from the database to problems/<id>/."""
    report = sync.dump(ctx.store, ctx.workspace.problems_dir, list(ids) or None)
    if as_json:
        print_json(report.to_json())
    else:
        for error in report.errors:
            click.echo(f"error: {error['path']}: {error['message']}", err=True)
        click.echo(f"{len(report.written)} written, {len(report.unchanged)} unchanged")
    if report.errors:
        sys.exit(1)


@click.group("problems")
def problems_group() -> None:
    """Create, list, show and set problems."""


@problems_group.command("list")
@click.option("--stage", type=click.Choice(STAGES))
@click.option("--task", type=click.Choice(TASKS))
@click.option("--data", type=click.Choice(DATA))
@click.option("--status", type=click.Choice(STATUSES))
@click.option("--search", "text", help="Full-text search over title, prompt and code.")
@json_option
@pass_ctx
def problems_list(ctx: CliContext, stage, task, data, status, text, as_json: bool) -> None:
    """List problems, optionally filtered by label, status or text."""
    rows = problem_store.list_rows(ctx.store, stage=stage, task=task, data=data,
                                   status=status, text=text)
    # problems you are still to vote blind in a label round: labels hidden, and a label
    # filter never tells them apart
    blind = rounds.blind_for(ctx.store, ctx.actor)
    if stage or task or data:
        rows = [r for r in rows if r["id"] not in blind]
    rows = rounds.hide_in_rows(ctx.store, ctx.actor, rows)
    if as_json:
        print_json(rows)
        return
    rich_table(["id", "title", "stage", "task", "data", "status"],
               [[r["id"], r["title"], r["stage"], r["task"], r["data"], r["status"]]
                for r in rows], title=f"{len(rows)} problem(s)")


@problems_group.command("show")
@click.argument("problem_id")
@json_option
@pass_ctx
def problems_show(ctx: CliContext, problem_id: str, as_json: bool) -> None:
    """Show one problem: metadata, prompt, solution and tests."""
    problem = problem_store.get(ctx.store, problem_id)
    imported = import_store.for_problem(ctx.store, problem_id)
    if problem_id in rounds.blind_for(ctx.store, ctx.actor):
        # a label round has you vote this problem blind: its labels show once you have
        for axis, value in rounds.hide_labels(problem.to_dict()).items():
            if axis in AXES:
                setattr(problem, axis, value)
    if as_json:
        print_json({**problem.to_dict(), "import": imported})
        return
    console = Console()
    console.rule(f"[bold]{problem.id}[/] — {problem.title}")
    for key in ("entry_point", "kind", "stage", "task", "data", "framework", "status"):
        console.print(f"[dim]{key:>12}[/] {getattr(problem, key)}")
    if problem.source:
        console.print(f"[dim]{'source':>12}[/] {problem.source}")
    if problem.test_node_ids:
        console.print(f"[dim]{'node ids':>12}[/] {' '.join(problem.test_node_ids)}")
    if imported:
        console.print(f"[dim]{'imported':>12}[/] {escape(imported['key'])} "
                      f"({imported['origin']})", highlight=False)
        console.print(f"[dim]{'flags':>12}[/] "
                      f"{escape(', '.join(imported['flags'])) or '(none)'}", highlight=False)
    console.rule("prompt")
    console.print(Markdown(problem.prompt))
    console.rule("solution.py")
    console.print(Syntax(problem.solution, "python"))
    if problem.tests is not None:
        console.rule("test_solution.py")
        console.print(Syntax(problem.tests, "python"))


@problems_group.command("new")
@click.argument("problem_id", metavar="ID")
@click.option("--entry-point", "entry_point", metavar="NAME",
              help="Function name, or Class.method (default: from the id).")
@click.option("--kind", type=click.Choice(("function", "method")), default="function",
              show_default=True)
@json_option
@pass_ctx
def problems_new(ctx: CliContext, problem_id: str, entry_point: str | None, kind: str,
                 as_json: bool) -> None:
    """Start a problem: problems/ID/ from a template and a draft row in the database."""
    problem = problem_template.create(ctx.store, ctx.workspace.problems_dir, problem_id,
                                      entry_point=entry_point, kind=kind)
    folder = ctx.workspace.problems_dir / problem.id
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    if as_json:
        print_json({"id": problem.id, "entry_point": problem.entry_point,
                    "kind": problem.kind, "status": problem.status, "path": str(folder),
                    "files": files})
        return
    click.echo(f"created draft problem {problem.id} ({problem.kind} {problem.entry_point}) "
               f"in {folder}: {', '.join(files)}")
    click.echo(f"next: write prompt.md, solution.py and test_solution.py, then "
               f"`curator run {problem.id}`")


@problems_group.command("set")
@click.argument("problem_id")
@click.option("--stage", type=click.Choice(("",) + STAGES))
@click.option("--task", type=click.Choice(("",) + TASKS))
@click.option("--data", type=click.Choice(("",) + DATA))
@click.option("--status", type=click.Choice(STATUSES))
@click.option("--title")
@json_option
@pass_ctx
def problems_set(ctx: CliContext, problem_id: str, as_json: bool, **values) -> None:
    """Set labels, status or title of a problem (database and files, audited)."""
    changes = {k: v for k, v in values.items() if v is not None}
    if not changes:
        raise click.UsageError("nothing to set: give --stage, --task, --data, --status or --title")
    problem = problem_store.get(ctx.store, problem_id)
    for key, value in changes.items():
        setattr(problem, key, value)
    changed = sync.save_and_write(ctx.store, problem, ctx.workspace.problems_dir)
    if as_json:
        print_json({"id": problem_id, "changed": changed})
    else:
        click.echo(f"{problem_id}: {', '.join(changed) or 'nothing changed'}")


@problems_group.command("draft-prompt")
@click.argument("problem_id")
@click.option("--model", "--draft-with", "model", help="Model to draft with (default: "
              "curator.toml [llm] model).")
@click.option("--base-url", help="OpenAI-compatible endpoint (default: [llm] base_url).")
@click.option("--api-key-env", help="Environment variable holding the API key "
                                    "(default: [llm] api_key_env, else OPENAI_API_KEY).")
@json_option
@pass_ctx
def problems_draft_prompt(ctx: CliContext, problem_id: str, model: str | None,
                          base_url: str | None, api_key_env: str | None,
                          as_json: bool) -> None:
    """Have a model draft the prompt from the reference's code, docstring and context
    (never its path or repository); kept beside the docstring draft."""
    settings = llm.EndpointSettings.from_config(ctx.workspace.config)
    model = model or settings.model
    client = settings.client(base_url, api_key_env)
    if not model or client is None:
        raise click.UsageError("give --model and --base-url (or curator.toml [llm] model "
                               "and base_url)")
    result = prompt_drafts.draft(ctx.store, problem_id, client, model)
    if as_json:
        print_json(result)
        return
    click.echo(f"{problem_id}: {model} drafted a prompt (template "
               f"{result['template_sha256'][:12]}); choose with `curator problems drafts "
               f"{problem_id} --use {result['source']}`")


@problems_group.command("drafts")
@click.argument("problem_id")
@click.option("--use", "use_source", metavar="SOURCE",
              help="Make this draft the prompt (docstring, or model:NAME).")
@json_option
@pass_ctx
def problems_drafts(ctx: CliContext, problem_id: str, use_source: str | None,
                    as_json: bool) -> None:
    """A problem's prompt drafts side by side (docstring draft and models' drafts)."""
    if use_source:
        changed = prompt_drafts.use(ctx.store, ctx.workspace.problems_dir, problem_id,
                                    use_source)
        if as_json:
            print_json({"id": problem_id, "used": use_source, "changed": changed})
        else:
            click.echo(f"{problem_id}: prompt is now the {use_source} draft "
                       f"({', '.join(changed) or 'nothing changed'})")
        return
    rows = prompt_drafts.drafts_of(ctx.store, problem_id)
    if as_json:
        print_json({"id": problem_id, "drafts": rows})
        return
    if not rows:
        click.echo(f"{problem_id}: no drafts yet (`curator problems draft-prompt "
                   f"{problem_id} --model NAME`)")
        return
    rich_table(["source", "template", "created", "text"],
               [[r["source"], (r["template_sha256"] or "")[:12], r["created_at"], r["text"]]
                for r in rows], title=f"{len(rows)} draft(s) of {problem_id}")


COMMANDS = [init_cmd, load_cmd, dump_cmd, problems_group]
