"""The `curator` command: the app with no sub-command, a headless action per sub-command.

Each sub-command module exposes COMMANDS; they are registered below.
"""

from __future__ import annotations

import sys

import click

from curator import __version__
from curator.cli.context import CliContext
from curator.errors import CuratorError


class CuratorGroup(click.Group):
    """Turns CuratorError into one line on stderr and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CuratorError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        finally:
            if isinstance(ctx.obj, CliContext):
                ctx.obj.close()


@click.group(cls=CuratorGroup, invoke_without_command=True)
@click.option("--workspace", "-w", type=click.Path(file_okay=False),
              help="Workspace folder (default: $CURATOR_WORKSPACE, else the nearest "
                   "ancestor with problems/).")
@click.option("--db", type=click.Path(dir_okay=False), help="Database file to use.")
@click.option("--user", help="Who is acting (default: $CURATOR_USER, else the login name).")
@click.version_option(__version__, prog_name="curator")
@click.pass_context
def main(ctx: click.Context, workspace: str | None, db: str | None, user: str | None) -> None:
    """DL-Bench Curator: build, run and publish a deep-learning code benchmark."""
    ctx.obj = CliContext(workspace, db, user)
    if ctx.invoked_subcommand is None:
        from curator.tui.app import run_app

        run_app(ctx.obj.workspace, ctx.obj.actor)


def _register() -> None:
    import importlib

    for name in ("problems", "engine", "mining", "samples", "review", "release", "dev"):
        try:
            module = importlib.import_module(f"curator.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"curator.cli.{name}":
                continue  # that part of the product is not built yet
            raise
        for command in module.COMMANDS:
            main.add_command(command)


_register()
