"""Finding the workspace (a folder with problems/ and db/) and who is acting."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass, field
from pathlib import Path

from curator import config as config_file
from curator.config import Config
from curator.errors import WorkspaceError
from curator.limits import Limits

CONFIG_NAME = config_file.NAME


@dataclass
class Workspace:
    root: Path
    db_path: Path
    config: Config = field(default_factory=Config)   # curator.toml, typed

    def __post_init__(self) -> None:
        if isinstance(self.config, dict):   # parsed TOML, as tests and tools write it
            self.config = config_file.from_dict(self.config)

    @property
    def problems_dir(self) -> Path:
        return self.root / "problems"

    @property
    def db_dir(self) -> Path:
        return self.root / "db"

    @property
    def repos_dir(self) -> Path:
        return self.db_dir / "repos"

    @property
    def limits(self) -> Limits:
        """The input limits: curator.toml's [limits] over the defaults."""
        return self.config.limits


def discover(workspace: str | os.PathLike | None = None,
             db: str | os.PathLike | None = None,
             cwd: str | os.PathLike | None = None,
             env: dict | None = None) -> Workspace:
    """--workspace, else $CURATOR_WORKSPACE, else the nearest ancestor with problems/."""
    env = os.environ if env is None else env
    if workspace is not None:
        root = Path(workspace)
        if not root.is_dir():
            raise WorkspaceError(f"{root}: workspace folder does not exist")
    elif env.get("CURATOR_WORKSPACE"):
        root = Path(env["CURATOR_WORKSPACE"])
        if not root.is_dir():
            raise WorkspaceError(f"{root}: CURATOR_WORKSPACE does not exist")
    else:
        start = Path(cwd) if cwd is not None else Path.cwd()
        start = start.resolve()
        for candidate in (start, *start.parents):
            if (candidate / "problems").is_dir():
                root = candidate
                break
        else:
            raise WorkspaceError(
                f"{start}: no workspace here or above (a folder with problems/); "
                "run `curator init DIR` or pass --workspace")
    root = root.resolve()
    db_path = Path(db).resolve() if db is not None else root / "db" / "curator.sqlite"
    return Workspace(root=root, db_path=db_path, config=load_config(root))


def load_config(root: Path) -> Config:
    """The workspace's curator.toml (ConfigError, a WorkspaceError, when unusable)."""
    return config_file.load(root / CONFIG_NAME)


def init(root: str | os.PathLike) -> Workspace:
    root = Path(root)
    (root / "problems").mkdir(parents=True, exist_ok=True)
    (root / "db").mkdir(parents=True, exist_ok=True)
    gitignore = root / "db" / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("*.sqlite*\nrepos/\n", encoding="utf-8")
    return discover(workspace=root)


def actor(user: str | None = None, env: dict | None = None) -> str:
    """--user, else $CURATOR_USER, else the login name."""
    env = os.environ if env is None else env
    if user:
        return user
    if env.get("CURATOR_USER"):
        return env["CURATOR_USER"]
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in some containers
        return "unknown"
