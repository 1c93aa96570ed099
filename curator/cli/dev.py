"""dev synth: a synthetic workspace for trying the app and measuring it at scale."""

from __future__ import annotations

from pathlib import Path

import click

from curator import synthetic
from curator.cli.context import json_option, print_json, progress_bar
from curator.errors import CuratorError


@click.group("dev")
def dev_group() -> None:
    """Developer tools."""


@dev_group.command("synth")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--count", type=int, default=1000, show_default=True,
              help="How many synthetic problems.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--files/--no-files", default=False,
              help="Also write problems/<id>/ folders (slow for large counts).")
@json_option
def synth_cmd(directory: str, count: int, seed: int, files: bool, as_json: bool) -> None:
    """Create a workspace in DIRECTORY holding COUNT synthetic problems (database only)."""
    if (Path(directory) / "db" / "curator.sqlite").exists():
        raise CuratorError(f"{directory}: already has a database; choose a new folder")
    with progress_bar("generating", enabled=not as_json) as bar:
        ws = synthetic.create_workspace(directory, count, seed, write_files=files,
                                        progress=bar)
    if as_json:
        print_json({"workspace": str(ws.root), "db": str(ws.db_path), "problems": count})
    else:
        click.echo(f"{count} synthetic problems in {ws.db_path}; open with "
                   f"`curator --workspace {ws.root}`")


COMMANDS = [dev_group]
