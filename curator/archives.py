"""Byte-reproducible .tar.gz archives, and reading them back safely.

The same files always give the same bytes: entries sorted, every header normalised
(fixed mtime, uid/gid 0, no user or group names, mode 0644 for files and 0755 for
folders), PAX format, and a gzip header with mtime 0 and no file name.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from curator.limits import DEFAULT, Limits

MTIME = 0


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


class _Capped(io.RawIOBase):
    """A decompressed stream that stops once more than `cap` bytes came out of it."""

    def __init__(self, stream, cap: int, what: str):
        self.stream, self.cap, self.what, self.count = stream, cap, what, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.stream.read(len(buffer))
        self.count += len(data)
        if self.count > self.cap:
            raise ArchiveError(f"expands past {self.cap} bytes ({self.what})")
        buffer[:len(data)] = data
        return len(data)


def _open_stream(path):
    raw = open(path, "rb")
    magic = raw.read(6)
    raw.seek(0)
    if magic[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if magic[:3] == b"BZh":
        return bz2.BZ2File(raw, "rb"), raw
    if magic == b"\xfd7zXZ\x00":
        return lzma.LZMAFile(raw, "rb"), raw
    return raw, raw


def iter_members(path, limits: Limits = DEFAULT,
                 wanted: Callable[[str], bool] | None = None
                 ) -> Iterator[tuple[tarfile.TarInfo, bytes | None]]:
    """Stream the members of a tar archive (plain, .gz, .bz2 or .xz), never extracting.

    Yields (member, bytes) for wanted regular files and (member, None) for the others.
    Refuses (ArchiveError) a member larger than [limits] archive_member_bytes, or members
    adding up to more than archive_total_bytes, as soon as a header says so: nothing is
    decompressed past a cap, so a small archive expanding to gigabytes is refused at once.
    """
    member_cap, total_cap = limits.archive_member_bytes, limits.archive_total_bytes
    total = 0
    try:
        stream, raw = _open_stream(path)
    except OSError as exc:
        raise ArchiveError(f"cannot read: {exc.strerror or exc}") from None
    # Headers and padding come on top of the members' bytes: a margin, still bounded.
    capped = io.BufferedReader(_Capped(stream, total_cap + total_cap // 8 + (1 << 20),
                                       "[limits] archive_total_bytes"), 1 << 16)
    try:
        with tarfile.open(fileobj=capped, mode="r|") as tar:
            for member in tar:
                if member.isfile():
                    if member.size > member_cap:
                        raise ArchiveError(
                            f"member {member.name!r} is {member.size} bytes, over the limit "
                            f"of {member_cap} ([limits] archive_member_bytes in curator.toml)")
                    total += member.size
                    if total > total_cap:
                        raise ArchiveError(
                            f"members add up to more than {total_cap} bytes ([limits] "
                            "archive_total_bytes in curator.toml)")
                if member.isfile() and (wanted is None or wanted(member.name)):
                    handle = tar.extractfile(member)
                    yield member, handle.read() if handle else b""
                else:
                    yield member, None
    except ArchiveError:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise ArchiveError(f"not a readable tar archive: {exc}") from None
    finally:
        raw.close()


def read_tar_gz(path, limits: Limits = DEFAULT) -> tuple[str, dict[str, bytes]]:
    """(top folder, relative path -> bytes) of a bundle archive; nothing is extracted.

    Refuses absolute paths, `..`, links and device files, and members outside one top
    folder, so a hostile archive cannot touch the file system; and archives over the
    size caps (see iter_members).
    """
    files: dict[str, bytes] = {}
    prefix = None
    for member, data in iter_members(path, limits):
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
        files[str(PurePosixPath(*name.parts[1:]))] = data or b""
    return prefix or "", files
