"""samples import/eval/generate/list/show, report, taxonomy."""

from __future__ import annotations

import json
import sys
from collections import Counter

import click
from rich.console import Console
from rich.syntax import Syntax

from curator import llm
from curator import taxonomy as tax
from curator.cli.context import (
    CliContext,
    json_option,
    pass_ctx,
    print_errors,
    print_json,
    progress_bar,
    rich_table,
)
from curator.cli.engine import allow_weak_option, backend_options, cluster_line
from curator.dlbench import taxonomy_data
from curator.errors import CuratorError
from curator.evaluation import evaluate, generate
from curator.evaluation import report as report_mod
from curator.evaluation import samples as sample_files
from curator.evaluation.outcomes import PENDING, sample_runs
from curator.evaluation.pass_at_k import KS
from curator.labels import AXES
from curator.store import samples as sample_store


@click.group("samples")
def samples_group() -> None:
    """LLM samples: import, evaluate, generate, list."""


@samples_group.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("--model", help="Model name for rows that do not name one.")
@click.option("--technique", help="Prompting technique for rows that do not name one.")
@click.option("--format", "fmt", type=click.Choice(["samples", "dlbench-taxonomy"]),
              default="samples", show_default=True,
              help="samples: JSONL / DL-Bench JSON files. dlbench-taxonomy: DL-Bench's "
                   "Taxonomy-Data folder, samples with the outcomes DL-Bench recorded.")
@json_option
@pass_ctx
def import_cmd(ctx: CliContext, files: tuple[str, ...], model: str | None,
               technique: str | None, fmt: str, as_json: bool) -> None:
    """Import samples from JSONL files or DL-Bench per-problem JSON files."""
    if fmt == "dlbench-taxonomy":
        click.echo("note: `samples import --format dlbench-taxonomy` is now "
                   "`curator dlbench taxonomy`", err=True)
        import_taxonomy(ctx, files, model, technique, as_json)
        return
    with progress_bar("importing", enabled=not as_json) as bar:
        report = sample_files.import_files(ctx.store, files, model=model, technique=technique,
                                           progress=bar, limit=ctx.workspace.limits.file_bytes)
    if as_json:
        print_json(report.to_json())
    else:
        print_errors(report.errors)
        click.echo(f"{report.imported} imported, {report.duplicates} duplicate(s), "
                   f"{report.no_code} without code, {len(report.errors)} error(s)")
    if report.errors:
        sys.exit(1)


@samples_group.command("eval")
@click.option("--model", help="Only this model's samples.")
@click.option("--workers", type=click.IntRange(min=1), help="Parallel workers (default: CPUs).")
@click.option("--timeout", type=float, help="Per-run time limit in seconds (default: derived "
                                            "from the reference's own time).")
@click.option("--limit", type=click.IntRange(min=1), help="Evaluate at most this many samples.")
@backend_options
@allow_weak_option
@json_option
@pass_ctx
def eval_cmd(ctx: CliContext, model: str | None, workers: int | None, timeout: float | None,
             limit: int | None, backend: str | None, address: str | None,
             allow_weak: bool | None, as_json: bool) -> None:
    """Run every sample without an outcome through the engine (resumable)."""
    sample_store.check_models_exist(ctx.store, model)
    with progress_bar("evaluating", enabled=not as_json) as bar:
        report = evaluate.evaluate(ctx.store, ctx.workspace, model=model, workers=workers,
                                   timeout=timeout, limit=limit, progress=bar,
                                   backend=backend, address=address,
                                   allow_weak=allow_weak)
    if as_json:
        print_json(report.to_json())
    else:
        if report.references:
            mix = Counter(r["outcome"] for r in report.references)
            click.echo(f"ran {len(report.references)} reference(s) first, which had no run of "
                       "their current solution: " + ", ".join(
                           f"{n} {o}" for o, n in sorted(mix.items())))
            for ref in report.references:
                if ref["outcome"] != "passed":
                    click.echo(f"warning: {ref['problem_id']}: reference {ref['outcome']}; its "
                               "samples are not scored until it passes", err=True)
        for error in report.errors:
            click.echo(f"error: sample {error['sample_id']}: {error['message']}", err=True)
        mix = ", ".join(f"{k} {v}" for k, v in sorted(report.outcomes.items())) or \
            "nothing to run"
        click.echo(f"{report.evaluated} evaluated ({mix}); {report.skipped} already had an "
                   f"outcome" + ("; cancelled" if report.cancelled else "")
                   + (f"; {report.claimed_elsewhere} left to another running evaluation"
                      if report.claimed_elsewhere else ""))
        if report.cluster:
            click.echo(cluster_line(report.cluster))
        if report.infra:
            click.echo(f"warning: {report.infra} run(s) failed in the harness and will be "
                       "retried by the next `samples eval`", err=True)
    if report.errors:
        sys.exit(1)


@samples_group.command("generate")
@click.option("--model", required=True, help="Model name as the endpoint knows it.")
@click.option("--base-url", required=True,
              help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option("--technique", type=click.Choice(["zero-shot", "few-shot", "cot"]),
              default="zero-shot", show_default=True)
@click.option("-n", "n", type=click.IntRange(min=1), default=1, show_default=True,
              help="Samples per problem.")
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--problem", "problems", multiple=True, help="Only these problems (repeatable).")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Requests in flight at once.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
              help="Environment variable holding the API key (unset: no key sent).")
@click.option("--max-tokens", type=click.IntRange(min=1))
@click.option("--shots", type=click.IntRange(min=1), default=2, show_default=True,
              help="Examples for few-shot (from other problems).")
@click.option("--max-retries", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="Seconds to wait for one response.")
@json_option
@pass_ctx
def generate_cmd(ctx: CliContext, model: str, base_url: str, technique: str, n: int,
                 temperature: float, problems: tuple[str, ...], concurrency: int,
                 api_key_env: str, max_tokens: int | None, shots: int, max_retries: int,
                 timeout: float, as_json: bool) -> None:
    """Ask a chat-completions endpoint for samples (cached: nothing is paid for twice)."""
    client = llm.client_for(base_url, api_key_env, timeout_s=timeout, max_retries=max_retries)
    with progress_bar("generating", enabled=not as_json) as bar:
        report = generate.generate(
            ctx.store, model=model, base_url=base_url, technique=technique, n=n,
            temperature=temperature, problem_ids=list(problems) or None,
            concurrency=concurrency, api_key_env=api_key_env, max_tokens=max_tokens,
            shots=shots, client=client, progress=bar)
    if as_json:
        print_json(report.to_json())
    else:
        for failure in report.failed:
            click.echo(f"error: {failure['problem_id']} #{failure['sample_index']}: "
                       f"{failure['message']}", err=True)
        click.echo(f"{report.requests} requested: {report.cached} from cache, "
                   f"{report.generated} generated ({report.retries} retries), "
                   f"{report.imported} new sample(s), {len(report.failed)} failed")
    if report.failed:
        sys.exit(1)


@samples_group.command("list")
@click.option("--model")
@click.option("--problem", "problem_id")
@json_option
@pass_ctx
def list_cmd(ctx: CliContext, model: str | None, problem_id: str | None, as_json: bool) -> None:
    """List samples with their latest outcome."""
    rows = sample_store.list_rows(ctx.store, model=model, problem_id=problem_id)
    runs = sample_runs(ctx.store)
    for row in rows:
        run = runs.get(row["id"]) or {}
        row["outcome"] = run.get("outcome", PENDING)
        row["judged_by"] = run.get("external")   # None: run here; else where it was judged
    if as_json:
        print_json(rows)
        return
    rich_table(["id", "problem", "model", "technique", "#", "extraction", "outcome"],
               [[r["id"], r["problem_id"], r["model"], r["technique"], r["sample_index"],
                 r["extraction"], r["outcome"] + (f" ({r['judged_by']})" if r["judged_by"] else "")]
                for r in rows], title=f"{len(rows)} sample(s)")


@samples_group.command("show")
@click.argument("sample_id", type=int, metavar="SAMPLE")
@json_option
@pass_ctx
def show_cmd(ctx: CliContext, sample_id: int, as_json: bool) -> None:
    """Show one sample: raw text, extracted code, latest run."""
    sample = sample_store.get(ctx.store, sample_id)
    run = sample_runs(ctx.store, [sample_id]).get(sample_id)
    sample["run"] = run
    if as_json:
        print_json(sample)
        return
    console = Console()
    console.rule(f"sample {sample_id}: {sample['problem_id']} — {sample['model']}")
    console.print(f"extraction: {sample['extraction']}; outcome: "
                  f"{run['outcome'] if run else 'pending'}")
    if sample["code"] is not None:
        console.print(Syntax(sample["code"], "python"))
    else:
        console.rule("raw response")
        console.print(sample["raw"], markup=False)


# -- report ----------------------------------------------------------------------------------


@click.command("report")
@click.option("--model", help="Only this model.")
@click.option("--by", type=click.Choice(list(AXES)), help="Break down by one label axis only.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False),
              help="Also write the figures to this CSV file.")
@json_option
@pass_ctx
def report_cmd(ctx: CliContext, model: str | None, by: str | None, csv_path: str | None,
               as_json: bool) -> None:
    """pass@k per model, overall and by stage / task / data, with the outcome mix."""
    data = report_mod.build(ctx.store, model=model, by=by)
    if csv_path:
        report_mod.write_csv(data, csv_path)
    if as_json:
        print_json(data)
        return
    _render_report(data, by)
    if csv_path:
        click.echo(f"wrote {csv_path}")


def _fmt(metrics: dict, k: int) -> str:
    value = metrics.get(f"pass@{k}")
    return "" if value is None else f"{value:.4f}"


def _render_report(data: dict, by: str | None) -> None:
    models = data["models"]
    if not models and data["excluded"]:
        click.echo("nothing scored yet: every problem with samples is excluded (see below)")
    elif not models:
        click.echo("no evaluated samples (import with `curator samples import`, then run "
                   "`curator samples eval`)")
    ks = [f"pass@{k}" for k in KS]
    if models:
        rich_table(["model", *ks, "problems", "samples"],
                   [[name, *[_fmt(m["overall"], k) for k in KS], m["overall"]["problems"],
                     m["overall"]["samples"]] for name, m in models.items()],
                   title="pass@k (unbiased estimator; k shown where some problem has n >= k)")
        for axis in ([by] if by else AXES):
            rows = []
            for name, m in models.items():
                for label, metrics in m.get(axis, {}).items():
                    rows.append([name, label, *[_fmt(metrics, k) for k in KS],
                                 metrics["problems"], metrics["samples"]])
            rich_table(["model", axis, *ks, "problems", "samples"], rows, title=f"by {axis}")
        outcomes = sorted({o for m in models.values() for o in m["outcomes"]})
        rich_table(["model", *outcomes],
                   [[name, *[m["outcomes"].get(o, 0) for o in outcomes]]
                    for name, m in models.items()], title="outcomes")
        for name, m in models.items():
            if m.get("judged_elsewhere"):
                click.echo(f"{name}: {m['judged_elsewhere']} sample(s) judged elsewhere "
                           "(imported with their outcomes)")
    if data["excluded"]:
        rich_table(["problem", "why", "fix"],
                   [[pid, data["excluded_reasons"][pid], exclusion_fix(pid, data[
                       "excluded_reasons"][pid])] for pid in data["excluded"]],
                   title=f"excluded: {len(data['excluded'])} problem(s) not scored until "
                         "their reference passes")


def exclusion_fix(problem_id: str, reason: str) -> str:
    """The command that brings an excluded problem into the report."""
    if reason == "reference never run":
        return f"curator run {problem_id}"
    return f"fix its reference or tests, then curator run {problem_id}"


# -- taxonomy ----------------------------------------------------------------------------------


@click.command("taxonomy")
@click.option("--load", "load_path", type=click.Path(exists=True, dir_okay=False),
              help="Make this taxonomy JSON file the current version.")
@click.option("--export", "export_path", type=click.Path(dir_okay=False),
              help="Write the current taxonomy as JSON (to edit and --load back).")
@click.option("--version", "version", type=int, help="Show this stored version.")
@json_option
@pass_ctx
def taxonomy_cmd(ctx: CliContext, load_path: str | None, export_path: str | None,
                 version: int | None, as_json: bool) -> None:
    """The bug taxonomy: top-level categories, DL-specific sub-categories, verdicts."""
    if load_path:
        number, created = tax.load_file(ctx.store, load_path)
        if not as_json:
            click.echo(f"taxonomy version {number} " + ("stored" if created else
                                                         "unchanged (same as current)"))
    current = tax.get_version(ctx.store, version) if version else tax.current(ctx.store)
    if export_path:
        with open(export_path, "w", encoding="utf-8") as handle:
            json.dump(current.document, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    if as_json:
        print_json(current.to_json())
        return
    rich_table(["id", "key", "slug", "name", "definition"],
               [[c.id, tax.review_key(c.id, n), c.slug, c.name, c.definition]
                for n, c in enumerate(current.categories, 1)],
               title=f"{current.name} (version {current.version}) — top level")
    rich_table(["id", "name", "definition"],
               [[c.id, c.name, c.definition] for c in current.dl_categories],
               title="DL-specific sub-categories (use as CATEGORY/SUB, e.g. 8/dl-api-usage)")
    rich_table(["verdict", "name", "definition"],
               [[c.id, c.name, c.definition] for c in current.verdicts], title="verdicts")


def import_taxonomy(ctx: CliContext, folders: tuple[str, ...], model: str | None,
                     technique: str | None, as_json: bool) -> None:
    if not model:
        raise CuratorError("--format dlbench-taxonomy needs --model NAME")
    reports = []
    for folder in folders:
        with progress_bar("importing", enabled=not as_json) as bar:
            reports.append(taxonomy_data.import_taxonomy(ctx.store, folder, model, technique,
                                                    progress=bar))
    errors = [e for r in reports for e in r.errors]
    if as_json:
        print_json(reports[0].to_json() if len(reports) == 1 else
                   [r.to_json() for r in reports])
    else:
        print_errors(errors)
        for report in reports:
            mix = ", ".join(f"{k} {v}" for k, v in sorted(report.outcomes.items()))
            click.echo(f"{report.imported} imported ({mix or 'no outcomes'}; judged "
                       f"elsewhere), {report.duplicates} duplicate(s), {report.pending} "
                       f"without an outcome, {len(report.errors)} error(s)")
    if errors:
        sys.exit(1)


COMMANDS = [samples_group, report_cmd, taxonomy_cmd]

__all__ = ["COMMANDS", "CuratorError"]
