"""The `repo_envs` table: the environment built for each upstream repository's tests.

Read here for releases (their envs/ locks); curator.mining.envs builds the environments.
"""

from __future__ import annotations

from curator.store import Store


def lock_for_url(store: Store, url: str) -> dict | None:
    """{lock, commit_sha, python_version, name} of the repository with this URL, or None."""
    return store.one("SELECT e.lock, e.commit_sha, e.python_version, r.name FROM repo_envs e "
                     "JOIN repos r ON r.id = e.repo_id WHERE r.url = ?", (url,))
