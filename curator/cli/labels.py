"""labels: the vocabularies, and label rounds (assign, vote, undo, stats, resolve, adjudicate)."""

from __future__ import annotations

import click

from curator.cli.context import (
    CliContext,
    json_option,
    pass_ctx,
    print_json,
    rich_table,
    user_option,
)
from curator.labels import AXES
from curator.panel import rounds
from curator.problem import STATUSES


@click.group("labels", invoke_without_command=True)
@json_option
@click.pass_context
def labels_cmd(click_ctx: click.Context, as_json: bool) -> None:
    """The stage, task and data vocabularies; label rounds with several annotators."""
    if click_ctx.invoked_subcommand is not None:
        return
    ctx = click_ctx.find_object(CliContext)
    rows = ctx.store.labels()
    if as_json:
        print_json([{k: r[k] for k in ("axis", "slug", "name", "definition")} for r in rows])
        return
    rich_table(["axis", "slug", "name", "definition"],
               [[r["axis"], r["slug"], r["name"], r["definition"]] for r in rows])


@labels_cmd.command("edit")
@click.argument("axis", type=click.Choice(AXES))
@click.argument("slug")
@click.option("--name", help="New display name.")
@click.option("--definition", help="New definition.")
@pass_ctx
def labels_edit(ctx: CliContext, axis: str, slug: str, name, definition) -> None:
    """Edit a label's display name or definition (the slug stays)."""
    ctx.store.set_label_text(axis, slug, name=name, definition=definition)
    click.echo(f"{axis}/{slug} updated")


def _axis_options(func):
    for axis in reversed(AXES):
        func = click.option(f"--{axis}", axis, metavar="SLUG",
                            help=f"The {axis} label (a slug of `curator labels`).")(func)
    return func


def _ballot(stage, task, data) -> dict[str, str | None]:
    """The --stage/--task/--data options as the keyword arguments of a vote or a decision."""
    return dict(zip(AXES, (stage, task, data)))


def _values(vote: dict | None) -> str:
    """`model / detection / image` for a vote (`-` for an axis not voted), or `no vote`."""
    if not vote:
        return "no vote"
    return " / ".join(vote.get(a) or "-" for a in AXES)


@labels_cmd.command("assign")
@click.option("--annotators", required=True, help="Comma-separated names, e.g. ana,ben,cy.")
@click.option("--per-item", "per_item", type=int, default=3, show_default=True,
              help="Annotators per problem.")
@click.option("--problems", "problem_ids", metavar="IDS",
              help="Comma-separated problem ids (default: every problem not retired).")
@click.option("--status", type=click.Choice(STATUSES), help="Only problems with this status.")
@click.option("--dimensions", default=",".join(AXES), show_default=True,
              help="The labels to vote on, comma-separated.")
@click.option("--seed", type=int, default=0, show_default=True)
@json_option
@pass_ctx
def labels_assign(ctx: CliContext, annotators: str, per_item: int, problem_ids: str | None,
                  status: str | None, dimensions: str, seed: int, as_json: bool) -> None:
    """Start a label round: each problem to N annotators, balanced."""
    if problem_ids and status:
        raise click.UsageError("give --problems or --status, not both")
    ids = [p.strip() for p in problem_ids.split(",") if p.strip()] if problem_ids else None
    result = rounds.assign(ctx.store, annotators.split(","), per_item, problems=ids,
                           status=status, dimensions=dimensions, seed=seed)
    if as_json:
        print_json(result)
        return
    click.echo(f"{result['assigned']} problem(s) assigned to {result['per_item']} annotator(s) "
               f"each ({', '.join(result['dimensions'])}); "
               + ", ".join(f"{a} {n}" for a, n in result["annotators"].items())
               + (f"; {result['already_assigned']} already in a round"
                  if result["already_assigned"] else ""))


@labels_cmd.command("vote")
@click.argument("problem_id", metavar="ID")
@_axis_options
@click.option("--note", default="", help="Free text (why, what was unclear).")
@json_option
@user_option
@pass_ctx
def labels_vote(ctx: CliContext, problem_id: str, stage, task, data, note: str,
                as_json: bool) -> None:
    """Record your labels of a problem (as --user or $CURATOR_USER)."""
    result = rounds.vote(ctx.store, problem_id, ctx.actor, note=note,
                         **_ballot(stage, task, data))
    if as_json:
        print_json(result)
        return
    click.echo(f"{problem_id} ({result['annotator']}): {_values(result)}; "
               f"{result['votes']} vote(s), {result['assigned']} assigned")


@labels_cmd.command("undo")
@json_option
@user_option
@pass_ctx
def labels_undo(ctx: CliContext, as_json: bool) -> None:
    """Undo your latest act: a vote, an adjudication or a resolve (repeat to go back)."""
    result = rounds.undo(ctx.store, problems_dir=ctx.workspace.problems_dir)
    if as_json:
        print_json({"undone": result})
        return
    if result is None:
        click.echo("nothing to undo")
        return
    if result["action"] == "vote":
        click.echo(f"undid your vote on {result['problem_id']}: now "
                   f"{_values(result['restored'])}")
        return
    for d in result["decisions"]:
        was = d["restored"]
        how = "undecided" if was is None else f"decided {was['value']} ({was['method']})"
        click.echo(f"{d['problem_id']} {d['axis']}: {how}, label {d['label'] or '(none)'}")
    what = "adjudication" if result["action"] == "adjudicate" else "resolve"
    click.echo(f"undid your {what}: {len(result['decisions'])} decision(s) taken back")


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@labels_cmd.command("stats")
@json_option
@pass_ctx
def labels_stats(ctx: CliContext, as_json: bool) -> None:
    """Progress per annotator; per dimension Krippendorff's alpha, Cohen's kappa, confusion."""
    data = rounds.stats(ctx.store)
    if as_json:
        print_json(data)
        return
    click.echo(f"{data['items']} problem(s) in label rounds, {data['complete']} with every "
               "vote in")
    rich_table(["annotator", "assigned", "done"],
               [[a, p["assigned"], p["done"]] for a, p in data["annotators"].items()],
               title="progress")
    for axis, dim in data["dimensions"].items():
        click.echo(f"{axis}: Krippendorff's alpha {_fmt(dim['alpha'])} on {dim['items']} "
                   "problem(s) with two or more votes")
        for pair, kappa in dim["kappa"].items():
            click.echo(f"  Cohen's kappa {pair.replace('|', ' / ')}: {_fmt(kappa)}")
        values = sorted(dim["confusion"])
        if values:
            rich_table([axis, *values],
                       [[v, *(dim["confusion"][v].get(w, 0) for w in values)] for v in values],
                       title=f"{axis} confusion (vote pairs)")


@labels_cmd.command("resolve")
@json_option
@pass_ctx
def labels_resolve(ctx: CliContext, as_json: bool) -> None:
    """Apply the majority per dimension; ties and missing votes wait for adjudication."""
    result = rounds.resolve(ctx.store, ctx.workspace.problems_dir)
    if as_json:
        print_json(result)
        return
    for r in result["resolved"]:
        how = "single annotator" if r["method"] == rounds.SINGLE else \
            f"majority {r['votes']}/{r['of']}"
        click.echo(f"{r['problem_id']} {r['axis']} = {r['value']} ({how})")
    for t in result["ties"]:
        votes = ", ".join(f"{v} {n}" for v, n in t["votes"].items())
        click.echo(f"tie: {t['problem_id']} {t['axis']} ({votes}): `curator labels "
                   f"adjudicate {t['problem_id']} --{t['axis']} SLUG`")
    waiting = sorted({t["problem_id"] for t in result["too_few"]})
    click.echo(f"{len(result['resolved'])} label(s) decided, {len(result['ties'])} tie(s), "
               f"{len(waiting)} problem(s) waiting for votes"
               + (f" ({', '.join(waiting[:8])}{' ...' if len(waiting) > 8 else ''})"
                  if waiting else ""))


@labels_cmd.command("adjudicate")
@click.argument("problem_id", metavar="ID")
@_axis_options
@click.option("--note", default="", help="Why this label.")
@json_option
@user_option
@pass_ctx
def labels_adjudicate(ctx: CliContext, problem_id: str, stage, task, data, note: str,
                      as_json: bool) -> None:
    """Decide a problem's labels by hand (a tie, too few votes, a dispute)."""
    result = rounds.adjudicate(ctx.store, problem_id, ctx.workspace.problems_dir, note=note,
                               **_ballot(stage, task, data))
    if as_json:
        print_json(result)
        return
    click.echo(f"{problem_id}: " + ", ".join(
        f"{axis} = {d['value']} (adjudicated by {d['by']}, {d['votes']} of {d['of']} votes)"
        for axis, d in result["decided"].items()))


COMMANDS = [labels_cmd]
