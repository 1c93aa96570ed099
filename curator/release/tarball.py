"""Byte-reproducible .tar.gz archives, and reading them back safely.

The same files always give the same bytes: entries sorted, every header normalised
(fixed mtime, uid/gid 0, no user or group names, mode 0644 for files and 0755 for
folders), PAX format, and a gzip header with mtime 0 and no file name.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import PurePosixPath

MTIME = 0
MAX_MEMBER_BYTES = 2 << 30


def _info(name: str, size: int | None) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime = MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if size is None:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    else:
        info.type = tarfile.REGTYPE
        info.mode = 0o644
        info.size = size
    return info


def tar_gz_bytes(prefix: str, files: dict[str, bytes]) -> bytes:
    """A .tar.gz of `files` (relative path -> bytes) under the folder `prefix`/."""
    folders = {prefix}
    for path in files:
        parent = PurePosixPath(prefix, path).parent
        while str(parent) not in (".", "") and str(parent) not in folders:
            folders.add(str(parent))
            parent = parent.parent
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        entries = [(folder + "/", None) for folder in folders]
        entries += [(f"{prefix}/{path}", data) for path, data in files.items()]
        for name, data in sorted(entries, key=lambda e: e[0]):
            if data is None:
                tar.addfile(_info(name.rstrip("/"), None))
            else:
                tar.addfile(_info(name, len(data)), io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


class ArchiveError(Exception):
    pass


def read_tar_gz(path) -> tuple[str, dict[str, bytes]]:
    """(top folder, relative path -> bytes) of a bundle archive; nothing is extracted.

    Refuses absolute paths, `..`, links and device files, and members outside one top
    folder, so a hostile archive cannot touch the file system.
    """
    files: dict[str, bytes] = {}
    prefix = None
    try:
        with tarfile.open(path, mode="r:*") as tar:
            for member in tar:
                name = PurePosixPath(member.name)
                if name.is_absolute() or ".." in name.parts:
                    raise ArchiveError(f"unsafe member path {member.name!r}")
                if not (member.isfile() or member.isdir()):
                    raise ArchiveError(f"member {member.name!r} is not a file or folder")
                top = name.parts[0] if name.parts else ""
                if prefix is None:
                    prefix = top
                elif top != prefix:
                    raise ArchiveError(f"member {member.name!r} is outside {prefix}/")
                if member.isdir():
                    continue
                if len(name.parts) < 2:
                    raise ArchiveError(f"member {member.name!r} is not inside a folder")
                if member.size > MAX_MEMBER_BYTES:
                    raise ArchiveError(f"member {member.name!r} is too large")
                handle = tar.extractfile(member)
                files[str(PurePosixPath(*name.parts[1:]))] = handle.read() if handle else b""
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"not a readable tar archive: {exc}") from None
    return prefix or "", files
