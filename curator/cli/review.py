"""review queue/assign/label/undo/stats/adjudicate/export/import."""

from __future__ import annotations

import sys

import click

from curator import llm, review, taxonomy
from curator.cli.context import CliContext, json_option, pass_ctx, print_json, rich_table
from curator.errors import CuratorError
from curator.review import exchange
from curator.review import suggest as suggestions
from curator.review.annotations import format_label


@click.group("review")
def review_group() -> None:
    """Review failing samples into the bug taxonomy."""


def _pairs(categories: tuple[str, ...], reasons: tuple[str, ...]) -> list[tuple[str, str]]:
    if len(reasons) != len(categories):
        raise CuratorError(f"give one --reason per --category ({len(categories)} categories, "
                           f"{len(reasons)} reasons)")
    return list(zip(categories, reasons))


def _label_options(func):
    func = click.option("--note", default="", help="Free text (e.g. why a verdict).")(func)
    func = click.option("--verdict", type=click.Choice(list(review.VERDICTS)),
                        help="Instead of categories: the sample is correct, or the "
                             "benchmark item is defective.")(func)
    func = click.option("--reason", "reasons", multiple=True,
                        help="Why, for the --category in the same position.")(func)
    func = click.option("--category", "categories", multiple=True,
                        help="Bug category id or slug, optionally with a DL-specific "
                             "sub-category: 8, wrong-attribute-api, 8/dl-api-usage. "
                             "Give 1-2.")(func)
    return func


def _describe(ctx: CliContext, label: dict | None) -> str:
    return format_label(label, taxonomy.current(ctx.store))


@review_group.command("queue")
@click.option("--annotator", help="Only items assigned to this annotator.")
@click.option("--model")
@click.option("--pending", is_flag=True, help="Only items the annotator has not labelled.")
@json_option
@pass_ctx
def queue_cmd(ctx: CliContext, annotator: str | None, model: str | None, pending: bool,
              as_json: bool) -> None:
    """The failing samples waiting for review."""
    items = review.queue(ctx.store, annotator, model=model, pending_only=pending)
    if as_json:
        print_json([i.to_dict() for i in items])
        return
    rich_table(["sample", "problem", "model", "outcome", "assigned", "label"],
               [[i.sample_id, i.problem_id, i.model, i.outcome, ",".join(i.assigned),
                 _describe(ctx, i.label) if annotator else ""] for i in items],
               title=f"{len(items)} item(s)")


@review_group.command("assign")
@click.option("--annotators", required=True, help="Comma-separated names, e.g. a,b,c.")
@click.option("--overlap", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Share of items given to two annotators (for agreement).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--model", help="Only this model's failures.")
@json_option
@pass_ctx
def assign_cmd(ctx: CliContext, annotators: str, overlap: float, seed: int,
               model: str | None, as_json: bool) -> None:
    """Assign unassigned queue items: each to one annotator, a share to two."""
    result = review.assign(ctx.store, annotators.split(","), overlap=overlap, seed=seed,
                           model=model)
    if as_json:
        print_json(result)
        return
    click.echo(f"{result['assigned']} item(s) assigned ({result['double']} to two annotators); "
               + ", ".join(f"{a} {n}" for a, n in result["annotators"].items()))


@review_group.command("label")
@click.argument("sample_id", type=int, metavar="SAMPLE")
@_label_options
@click.option("--annotator", help="Label as this annotator (default: --user).")
@json_option
@pass_ctx
def label_cmd(ctx: CliContext, sample_id: int, categories, reasons, verdict, note,
              annotator: str | None, as_json: bool) -> None:
    """Label a failing sample: 1-2 --category/--reason pairs, or a --verdict."""
    result = review.label(ctx.store, sample_id, annotator or ctx.actor,
                          pairs=_pairs(categories, reasons), verdict=verdict, note=note)
    if as_json:
        print_json(result)
    else:
        click.echo(f"sample {sample_id} ({result['annotator']}): {_describe(ctx, result)}")


@review_group.command("undo")
@json_option
@pass_ctx
def undo_cmd(ctx: CliContext, as_json: bool) -> None:
    """Undo your latest labelling action (repeat to go further back)."""
    result = review.undo(ctx.store)
    if as_json:
        print_json({"undone": result})
        return
    if result is None:
        click.echo("nothing to undo")
    else:
        who = f" ({result['annotator']})" if result["annotator"] else " (final)"
        click.echo(f"undid {result['action']} on sample {result['sample_id']}{who}: now "
                   f"{_describe(ctx, result['restored'])}")


@review_group.command("stats")
@click.option("--model")
@json_option
@pass_ctx
def stats_cmd(ctx: CliContext, model: str | None, as_json: bool) -> None:
    """Progress, category counts, agreement (alpha, kappa) and disagreements."""
    data = review.stats(ctx.store, model=model)
    if as_json:
        print_json(data)
        return
    click.echo(f"{data['items']} item(s) in the queue, {data['labelled']} labelled, "
               f"{data['adjudicated']} adjudicated")
    rich_table(["annotator", "assigned", "labelled", "remaining", "today"],
               [[a, p["assigned"], p["labelled"], p["remaining"], p["labelled_today"]]
                for a, p in data["progress"].items()], title="progress")
    cats = data["categories"]
    rich_table(["category", "count"], [[k, v] for k, v in cats["top_level"].items() if v]
               + [[k, v] for k, v in cats["verdicts"].items() if v], title="top level")
    rich_table(["DL-specific", "count"], [[k, v] for k, v in cats["dl_specific"].items() if v],
               title="DL-specific")
    used = data["suggestions"]
    if used["decided"]:
        click.echo(f"suggestions: first taken on {used['accepted']} of {used['decided']} "
                   f"label(s) (precision {used['precision']:.3f}, top-3 {used['top3']:.3f}), "
                   f"{used['overridden']} overridden")
    else:
        click.echo("suggestions: no label saved after a suggestion yet")
    agreement = data["agreement"]
    alpha = agreement["krippendorff_alpha"]
    click.echo(f"agreement on {agreement['items']} doubly-labelled item(s): Krippendorff's "
               f"alpha {'n/a' if alpha is None else f'{alpha:.3f}'}")
    for pair in agreement["cohen_kappa"]:
        kappa = pair["kappa"]
        click.echo(f"  Cohen's kappa {' / '.join(pair['annotators'])}: "
                   f"{'n/a' if kappa is None else f'{kappa:.3f}'} on {pair['items']} item(s)")
    if data["disagreements"]:
        rich_table(["sample", "problem", "labels", "adjudicated"],
                   [[d["sample_id"], d["problem_id"],
                     " | ".join(f"{a}: {_describe(ctx, v)}" for a, v in d["labels"].items()),
                     "yes" if d["adjudicated"] else ""] for d in data["disagreements"]],
                   title="disagreements")


@review_group.command("suggest")
@click.argument("sample_ids", type=int, nargs=-1, metavar="[SAMPLE_ID]...")
@click.option("--model", help="Also ask this model (default: curator.toml [llm] model, "
                              "when an endpoint is configured).")
@click.option("--base-url", help="OpenAI-compatible endpoint (default: curator.toml [llm] "
                                 "base_url).")
@click.option("--api-key-env", help="Environment variable holding the API key "
                                    "(default: [llm] api_key_env, else OPENAI_API_KEY).")
@json_option
@pass_ctx
def suggest_cmd(ctx: CliContext, sample_ids: tuple[int, ...], model: str | None,
                base_url: str | None, api_key_env: str | None, as_json: bool) -> None:
    """Suggested categories for failing samples: rules on the log, then a model."""
    settings = llm.EndpointSettings.from_config(ctx.workspace.config)
    model = model or settings.model
    client = settings.client(base_url, api_key_env) if model else None
    if model and client is None:
        raise CuratorError(f"--model {model} needs an endpoint: --base-url URL or "
                           "curator.toml [llm] base_url")
    found = suggestions.suggest(ctx.store, list(sample_ids) or None, client, model)
    tax = taxonomy.current(ctx.store)
    if as_json:
        print_json({"suggestions": [s.to_json(tax) for s in found]})
        return
    rows = []
    for entry in found:
        for rank, s in enumerate(entry.categories, 1):
            rows.append([entry.sample_id if rank == 1 else "", entry.problem_id if rank == 1
                         else "", rank, f"{s.category} {tax.category_name(s.category)}",
                         suggestions.sub_name(tax, s.dl), s.evidence, s.source])
        if not entry.categories:
            rows.append([entry.sample_id, entry.problem_id, "", "(no rule fired)", "", "", ""])
    rich_table(["sample", "problem", "#", "category", "sub-category", "evidence", "from"],
               rows, title=f"suggestions for {len(found)} failing sample(s); never labels "
                           "until accepted")


@review_group.command("adjudicate")
@click.argument("sample_id", type=int, required=False, metavar="[SAMPLE]")
@_label_options
@click.option("--accept", help="Take this annotator's label as final.")
@json_option
@pass_ctx
def adjudicate_cmd(ctx: CliContext, sample_id: int | None, categories, reasons, verdict,
                   note, accept: str | None, as_json: bool) -> None:
    """Set the final label of a sample; without SAMPLE, list items awaiting it."""
    if sample_id is None:
        pending = [d for d in review.stats(ctx.store)["disagreements"] if not d["adjudicated"]]
        if as_json:
            print_json(pending)
        elif not pending:
            click.echo("no disagreements awaiting adjudication")
        else:
            rich_table(["sample", "problem", "labels"],
                       [[d["sample_id"], d["problem_id"],
                         " | ".join(f"{a}: {_describe(ctx, v)}" for a, v in d["labels"].items())]
                        for d in pending], title="awaiting adjudication")
        return
    result = review.adjudicate(ctx.store, sample_id, pairs=_pairs(categories, reasons),
                               verdict=verdict, note=note, accept=accept)
    if as_json:
        print_json(result)
    else:
        click.echo(f"sample {sample_id} final: {_describe(ctx, result)}")


@review_group.command("export")
@click.option("--annotator", help="Only this annotator's labels (no final labels).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write to this file (default: standard output).")
@json_option
@pass_ctx
def export_cmd(ctx: CliContext, annotator: str | None, out_path: str | None,
               as_json: bool) -> None:
    """Write labels as JSONL, to merge on another machine with `review import`."""
    text, count = exchange.export_jsonl(ctx.store, out_path, annotator)
    if out_path is None:
        click.echo(text, nl=False)
    elif as_json:
        print_json({"path": out_path, "rows": count})
    else:
        click.echo(f"{count} label(s) written to {out_path}")


@review_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
@pass_ctx
def import_cmd(ctx: CliContext, file: str, as_json: bool) -> None:
    """Merge labels exported elsewhere (re-importing is a no-op; conflicts keep the newer)."""
    report = exchange.import_jsonl(ctx.store, file)
    if as_json:
        print_json(report.to_json())
    else:
        for error in report.errors:
            click.echo(f"error: {error['file']}:{error['line']}: {error['message']}", err=True)
        for c in report.conflicts:
            click.echo(f"conflict: sample {c['sample_id']} ({c['annotator']}): kept the "
                       f"{c['kept']} label (local {c['local_labelled_at']}, imported "
                       f"{c['imported_labelled_at']})", err=True)
        click.echo(f"{report.added} added, {report.updated} updated, {report.unchanged} "
                   f"unchanged, {len(report.conflicts)} conflict(s), "
                   f"{len(report.errors)} error(s)")
    if report.errors:
        sys.exit(1)


COMMANDS = [review_group]
