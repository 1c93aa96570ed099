"""The helper of `sandbox.CallMounts`, a small interpreter of its own: it keeps
CAP_SYS_ADMIN in the solution process's nested user namespace and mounts nothing but
overlays of folders under the judge's run folder, whose layers are the solution's own.
Few standard modules (it runs with -S -I, and its start is in the run's time: json,
through re and enum, doubled the interpreter's start, so messages are `pack`ed fields).
Arguments: its socket's descriptor, the
solution process's pid, the layers folder, the judge's run folder, the solution's own
folder. One request a message, one answer a message (an unmount is not answered)."""

import ctypes
import os
import sys

MAX_CALL_FOLDERS = 16          # overlays a call gets at most
MNT_DETACH = 2
O_PATH = getattr(os, "O_PATH", 0o10000000)
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4


def main(argv):
    fd, parent, layers, judge_root, own = int(argv[1]), int(argv[2]), argv[3], argv[4], argv[5]
    owner = int(argv[6]) if len(argv) > 6 else os.geteuid()   # whose layers they are
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if os.getppid() != parent:   # it ended before the line above
        return
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    serve(libc, fd, layers, judge_root, own, owner)


def serve(libc, fd, layers, judge_root, own, owner):
    mounted = []
    names = {}    # a folder's layers: <layers>/<n>, n its number in this run
    data = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            return
        if not chunk:
            return
        data += chunk
        if len(data) > MAX_MESSAGE:
            return
        while True:
            try:
                fields, data = unpack(data)
            except ValueError:
                return
            if fields is None:
                break   # the rest of the message is still to come
            request = _request(fields)
            if request is None:
                return
            for folder in reversed(mounted):
                libc.umount2(folder.encode(), MNT_DETACH)
            mounted.clear()
            for entry in os.listdir(layers):   # what the overlays left in their work
                work = os.path.join(layers, entry, "work")
                for name in os.listdir(work) if os.path.isdir(work) else ():
                    _remove(os.path.join(work, name))
            if request[0] == "unmount":
                continue   # no answer: the solution process does not wait for it
            done = _mount_overlays(libc, request[1], request[2], layers, judge_root, own,
                                   mounted, names, owner)
            reply = pack([str(n) for index, upper in done for n in (index, upper)])
            while reply:
                reply = reply[os.write(fd, reply):]


MAX_MESSAGE = 1 << 20


def pack(fields):
    """A message: its length, a newline, then its fields (str, no NUL) joined by NUL."""
    body = b"\0".join(os.fsencode(f) for f in fields)
    return b"%d\n" % len(body) + body


def unpack(data):
    """(fields, the rest) of the first whole message in `data`; (None, data) while it is
    not all there; ValueError for anything but a message."""
    head, newline, rest = data.partition(b"\n")
    if not newline:
        if len(head) > 8 or not head.isdigit() and head:
            raise ValueError("no message")
        return None, data
    if not head.isdigit() or len(head) > 8 or int(head) > MAX_MESSAGE:
        raise ValueError("no message")
    size = int(head)
    if len(rest) < size:
        return None, data
    body, rest = rest[:size], rest[size:]
    return [os.fsdecode(f) for f in body.split(b"\0")] if body else [], rest


def _request(fields):
    """("unmount",) or ("mount", folders, kept) from a request's fields: "mount", the
    number of folders, then per folder its path, the number of its kept paths and
    those; None when they say anything else."""
    if fields == ["unmount"]:
        return ("unmount",)
    if not fields or fields[0] != "mount" or len(fields) < 2 or not fields[1].isdigit():
        return None
    folders, kept, at = [], [], 2
    for _ in range(int(fields[1])):
        if at + 1 >= len(fields) or not fields[at + 1].isdigit():
            return None
        count = int(fields[at + 1])
        if at + 2 + count > len(fields):
            return None
        folders.append(fields[at])
        kept.append(fields[at + 2:at + 2 + count])
        at += 2 + count
    return ("mount", folders, kept) if at == len(fields) else None


def _mount_overlays(libc, folders, kept, layers, judge_root, own, mounted, names, owner):
    """Overlays over the judge's `folders` (existing folders under `judge_root`, no link
    on the way, not the solution's own), parents first; each lower layer opened before
    any is mounted, so a folder inside another is the judge's own below its overlay."""
    if not isinstance(folders, list):
        return []
    chosen = {}
    for index, folder in enumerate(folders[:MAX_CALL_FOLDERS]):
        if not isinstance(folder, str) or not os.path.isabs(folder) or "\0" in folder:
            continue
        real = os.path.realpath(folder)
        if real != os.path.normpath(folder) or not _inside(real, judge_root) or \
                _inside(real, own) or _inside(own, real) or real in chosen:
            continue
        chosen[real] = index
    kept = kept if isinstance(kept, list) else []
    opened = []
    try:
        for folder in sorted(chosen, key=lambda f: (f.count("/"), f)):
            try:
                fd = os.open(folder, O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
            except OSError:
                continue
            opened.append((folder, fd))
        done = []
        for folder, lower in opened:
            layer = os.path.join(layers, names.setdefault(folder, str(len(names))))
            upper, work = os.path.join(layer, "upper"), os.path.join(layer, "work")
            index = chosen[folder]
            fds = []
            try:
                for path in (layer, upper, work):
                    if not os.path.isdir(path) or os.path.islink(path):
                        os.mkdir(path, 0o700)
                        if path != work and owner != os.geteuid():
                            # made by the namespace's root: the run's uid reads (and
                            # writes, through the overlay) its layer
                            os.lchown(path, owner, owner)
                keep = kept[index] if index < len(kept) and isinstance(kept[index], list) \
                    else []
                _prune(upper, {k for k in keep if isinstance(k, str)})
                fds = [os.open(p, O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
                       for p in (upper, work)]
                options = (f"lowerdir=/proc/self/fd/{lower},upperdir=/proc/self/fd/{fds[0]},"
                           f"workdir=/proc/self/fd/{fds[1]},userxattr")
                if libc.mount(b"overlay", folder.encode(), b"overlay", 0,
                              options.encode()) == 0:
                    mounted.append(folder)
                    done.append((index, upper))
            except OSError:
                pass
            finally:
                for fd in fds:
                    os.close(fd)
        return done
    finally:
        for _, fd in opened:
            os.close(fd)


def _prune(upper, keep):
    """Everything in a folder's upper layer but the paths in `keep` (relative, and the
    folders on their way) goes: what the judge no longer has as written, a whiteout."""
    wanted = set(keep)
    for rel in keep:
        parts = rel.split("/")
        wanted.update("/".join(parts[:n]) for n in range(1, len(parts)))
    for folder, dirs, files in os.walk(upper, topdown=False):
        rel_folder = os.path.relpath(folder, upper)
        prefix = "" if rel_folder == "." else rel_folder + "/"
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            if prefix + name not in wanted:
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass
        for name in dirs:
            path = os.path.join(folder, name)
            if prefix + name not in wanted and not os.path.islink(path):
                _remove(path)


def _remove(path):
    """A folder of the solution's and what it holds, whatever their modes (overlayfs
    makes its work folder 000): the helper has no capability over files, only their
    owner's right to change their modes."""
    if os.path.islink(path) or not os.path.isdir(path):
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
    for folder, dirs, _ in os.walk(path):
        for name in dirs:
            inner = os.path.join(folder, name)
            if not os.path.islink(inner):
                try:
                    os.chmod(inner, 0o700)
                except OSError:
                    pass
    for folder, dirs, files in os.walk(path, topdown=False):
        for name in files + dirs:
            inner = os.path.join(folder, name)
            try:
                if os.path.isdir(inner) and not os.path.islink(inner):
                    os.rmdir(inner)
                else:
                    os.unlink(inner)
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


if __name__ == "__main__":
    main(sys.argv)
