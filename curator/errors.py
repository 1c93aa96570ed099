"""Errors people see: one line that names the file, row or problem and what is wrong."""


class CuratorError(Exception):
    """Base class for errors reported to people as one line (no traceback)."""


class WorkspaceError(CuratorError):
    """No workspace could be found or created."""


class StoreError(CuratorError):
    """The database cannot be opened, is from a newer version, or is corrupt."""


class ProblemFormatError(CuratorError):
    """A problem folder is malformed."""

    def __init__(self, path, message):
        self.path = str(path)
        self.message = " ".join(str(message).split())   # one line, whatever the file held
        super().__init__(f"{self.path}: {message}")


class ReleaseError(CuratorError):
    """A bundle or a DL-Bench release cannot be built, read or imported."""


class NotFoundError(CuratorError):
    """An id (problem, sample, candidate ...) does not exist."""


class Cancelled(CuratorError):
    """The person cancelled a long operation; nothing it would have written was written."""
