"""The `curator` command: the app with no sub-command, a headless action per sub-command.

Each sub-command module exposes COMMANDS; they are registered below.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from curator import __version__, crashlog
from curator.cli.context import CliContext
from curator.errors import Cancelled, CuratorError
from curator.store import lock_message

# Sub-command -> the module that defines it (in its COMMANDS list). Modules are imported
# only when their command runs, so `curator` opens the app without importing every area.
_COMMAND_MODULES = {
    "init": "problems", "load": "problems", "dump": "problems", "problems": "problems",
    "labels": "labels",
    "run": "engine", "doctor": "engine",
    "mine": "mining", "candidates": "mining", "repo": "mining",
    "samples": "samples", "report": "samples", "taxonomy": "samples",
    "review": "review",
    "release": "release", "import-dlbench": "dlbench", "import-release": "release",
    "dlbench": "dlbench",
    "dev": "dev",
    "discover": "discover",
    "validate": "validity",
}


class CuratorGroup(click.Group):
    """Loads sub-commands lazily; turns CuratorError into one line and exit status 1."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_COMMAND_MODULES))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands or name not in _COMMAND_MODULES:
            return super().get_command(ctx, name)
        module = importlib.import_module(f"curator.cli.{_COMMAND_MODULES[name]}")
        for command in module.COMMANDS:
            self.add_command(command)
        return self.commands.get(name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CuratorError as exc:
            # One line for people, whatever a library put into the message.
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            click.echo(f"error: {' '.join(lines)}", err=True)
            sys.exit(130 if isinstance(exc, Cancelled) else 1)   # 130: stopped by Ctrl-C
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort,
                SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - the last resort: no traceback for people
            db_dir = _db_dir(ctx.obj)
            message = lock_message(exc, _db_path(ctx.obj))
            if message is None:
                message = crashlog.report(exc, db_dir)
            click.echo(f"error: {message}", err=True)
            sys.exit(1)
        finally:
            if isinstance(ctx.obj, CliContext):
                ctx.obj.close()


def _db_path(obj) -> Path | None:
    """The workspace's database file when there is a workspace, else None."""
    if not isinstance(obj, CliContext):
        return None
    try:
        return obj.workspace.db_path
    except Exception:  # noqa: BLE001 - no workspace: the log goes to the temp folder
        return None


def _db_dir(obj) -> Path | None:
    """db/ of the workspace (where logs/ goes), else None."""
    if not isinstance(obj, CliContext):
        return None
    try:
        return obj.workspace.db_dir
    except Exception:  # noqa: BLE001
        return None


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
