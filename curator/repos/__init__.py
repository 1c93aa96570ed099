"""Repositories: git caching, identity and registration, pinned checkouts, licences,
and the isolated Python environment each repository runs its tests in.

- gitcache:     bare caches under db/repos/, trees read from git objects
- identity:     a repository's portable name and registration (`register_source`)
- checkout:     a worktree at the pinned commit with one symbol replaced
- licenses:     detecting a repository's licence
- requirements: reading what a repository declares it needs (pyproject, setup.py, ...)
- uv:           pip's package sources handed to uv; venv, lock, install
- environments: building and reusing an environment per repository and commit
- importcheck:  whether an environment imports the repository
"""
