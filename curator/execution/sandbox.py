"""Isolation: the bubblewrap command a worker lives in, the environment and the rlimits.

Strong isolation (bwrap present and working): read-only root, a private size-limited
/tmp, homes, /run and the workspace hidden, no network, own pid/ipc/uts namespaces, the
sandbox dies with its parent. Weak isolation (no bwrap): rlimits, a scrubbed environment
and process-tree cleanup only. In both, a run started as root drops to `nobody` so the
process limit applies and root-owned files stay out of reach.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import resource
import shutil
import signal
import site
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from curator.errors import CuratorError
from curator.execution import mount_helper

NOBODY = 65534
HIDDEN = ("/root", "/home", "/run", "/var/tmp", "/mnt", "/media")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
INSTALL_HINT = "apt-get install bubblewrap"


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (os.path.exists("/usr/bin/bwrap") and "/usr/bin/bwrap")


@functools.cache
def probe() -> tuple[bool, str]:
    """Whether bwrap can build the namespaces we need here; the reason when it cannot."""
    path = bwrap_path()
    if not path:
        return False, f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    argv = SandboxSpec().argv(["true"])  # the very flags workers get (old bwraps lack some)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap cannot start: {exc}"
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["unknown error"])[-1]
        return False, f"bwrap cannot create namespaces here: {detail}"
    return True, f"bwrap at {path}"


@functools.cache
def bwrap_version() -> str | None:
    path = bwrap_path()
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                             check=False)
        return out.stdout.strip().split()[-1]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None


def resolve_isolation(requested: str = "auto") -> tuple[str, str]:
    """("strong"|"weak", why) for a requested level: auto, strong or weak."""
    if requested == "weak":
        return "weak", "weak isolation requested"
    ok, detail = probe()
    if ok:
        return "strong", detail
    if requested == "strong":
        raise CuratorError(f"strong isolation requested but {detail}")
    return "weak", detail


def run_uid() -> int | None:
    """The uid runs switch to: nobody when we are root, so RLIMIT_NPROC applies and
    neither root's processes nor root's files are within reach of a run."""
    if os.geteuid() != 0:
        return None
    return NOBODY


def needs_read_grant(isolation: str = "strong") -> bool:
    """Whether runs dropped to nobody must keep the right to read every file to start at
    all: weak isolation as root with an interpreter nobody can read where it is (a pyenv
    Python under /root). The strong sandbox mounts the interpreter where nobody can."""
    if os.geteuid() != 0 or isolation == "strong":
        return False
    return not all(_world_readable(p) for p in python_paths(None))


def _world_readable(path: str) -> bool:
    current = Path(path).resolve()
    for folder in (current, *current.parents):
        try:
            mode = folder.stat().st_mode
        except OSError:
            return False
        if not mode & 0o001 or (folder == current and not mode & 0o004):
            return False
    return True


def _privilege_args() -> list[str]:
    if os.geteuid() == 0:
        # Privileged bwrap: no user namespace, so the worker can drop runs to nobody;
        # it keeps only the capabilities needed for that.
        # (and for signalling and cleaning up after them).
        # CAP_SYS_ADMIN: each run gets a fresh IPC namespace (runs drop it with root),
        # and its processes mount their private views (`views`); CAP_CHOWN: those views'
        # folders are the run's uid's, and the worker keeps the run cache's files its.
        caps = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
                "CAP_SYS_ADMIN", "CAP_CHOWN")
        return ["--cap-drop", "ALL", *[a for cap in caps for a in ("--cap-add", cap)]]
    return ["--unshare-user"]


# -- what the sandbox must see ----------------------------------------------------------


def python_paths(python: str | None = None) -> list[str]:
    """Folders the sandbox mounts read-only so an interpreter starts and imports what it has.

    The one answer to "what must a run see of this Python", for every kind of environment:
    the environment's own prefix (a venv, uv or conda env, found from the path as given,
    without resolving symlinks: two venvs symlinking the same base python are still two
    environments), its base interpreter's prefix (pyvenv.cfg `home`, and where each link of
    the symlink chain points), and folders that site-packages' .pth files and editable
    installs add to sys.path. None means the curator's own interpreter, which also needs
    the curator package.
    """
    paths: set[str] = set()
    if python is None:
        paths.update([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix])
        paths.update(site.getsitepackages())
        for folder in site.getsitepackages():
            paths.update(_pth_dirs(Path(folder)))
        paths.add(str(Path(__file__).resolve().parents[1]))  # the curator package
        python = sys.executable
    exe = Path(os.path.abspath(python))
    prefix = exe.parent.parent
    paths.add(str(prefix))
    for link in _symlink_chain(exe):
        paths.add(str(link.parent.parent))
    cfg = prefix / "pyvenv.cfg"
    if cfg.is_file():
        for line in cfg.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                home = Path(value.strip())
                paths.add(str(home.parent))
                paths.add(str(Path(os.path.realpath(home)).parent))
    for libdir in ("lib", "lib64"):
        for folder in prefix.glob(f"{libdir}/python*/site-packages"):
            paths.update(_pth_dirs(folder))
    return sorted(p for p in paths if p and os.path.isdir(p) and p != "/")


def _symlink_chain(exe: Path) -> list[Path]:
    """The interpreter path and every path its symlinks lead through, to the real file."""
    chain, current = [exe], exe
    for _ in range(40):
        if not current.is_symlink():
            break
        target = Path(os.readlink(current))
        current = Path(os.path.normpath(current.parent / target))
        chain.append(current)
    chain.append(Path(os.path.realpath(exe)))
    return chain


def interpreter_problem(python: str) -> str | None:
    """Why `python` cannot be exec'd as it is seen from here (None when it can)."""
    if not os.path.lexists(python):
        return f"{python} does not exist"
    real = os.path.realpath(python)
    if not os.path.exists(real):
        return f"{python} is a symlink to {real}, which does not exist"
    if not os.access(real, os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        return f"{python} is not executable"
    return None


def _pth_dirs(folder: Path) -> set[str]:
    found = set()
    for pth in folder.glob("*.pth"):
        try:
            lines = pth.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if line.startswith("/") and os.path.isdir(line):
                found.add(line)
    # setuptools' editable finders map package names to source folders.
    for finder in folder.glob("__editable__*finder.py"):
        text = finder.read_text(errors="replace")
        for token in text.replace("'", '"').split('"'):
            if token.startswith("/") and os.path.isdir(token):
                found.add(token)
    return found


@dataclass
class SandboxSpec:
    """How to wrap one worker process in bwrap."""

    python: str = sys.executable
    hide: list[str] = field(default_factory=list)        # extra folders to hide (workspace)
    ro_binds: list[tuple[str, str]] = field(default_factory=list)  # (host, inside)
    # (host, inside) bound writable inside a folder only root may enter (the run cache)
    private_binds: list[tuple[str, str]] = field(default_factory=list)
    tmp_mb: int = 2048
    shm_mb: int = 512

    def argv(self, command: list[str]) -> list[str]:
        """Deny by default: the sandbox's root is empty; only the system's programs and
        libraries, a few files of /etc, the interpreters and what repo-backed runs need are
        mounted (read-only), besides a private /tmp, /dev/shm, /dev and /proc."""
        path = bwrap_path()
        args = [path]
        for folder in SYSTEM_DIRS:
            if os.path.islink(folder):
                args += ["--symlink", os.readlink(folder), folder]
            elif os.path.isdir(folder):
                args += ["--ro-bind", folder, folder]
        args += ["--dev", "/dev", "--proc", "/proc", "--perms", "0755", "--dir", "/etc"]
        for name in ETC_FILES:
            if os.path.lexists(f"/etc/{name}"):
                args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        args += ["--perms", "1777", "--size", str(self.tmp_mb << 20), "--tmpfs", "/tmp"]
        args += ["--perms", "1777", "--size", str(self.shm_mb << 20), "--tmpfs", "/dev/shm"]
        binds = [(p, p) for p in mounts_for(self.python)]
        binds += list(self.ro_binds)
        made: set[str] = {"/", "/etc", "/tmp", "/dev", "/proc", *SYSTEM_DIRS}
        bound: list[str] = list(SYSTEM_DIRS)
        for host, inside in sorted(set(binds), key=lambda b: (len(b[1]), b[1])):
            if any(inside == b or inside.startswith(b.rstrip("/") + "/") for b in bound):
                continue  # already visible through a bound parent
            bound.append(inside)
            # bwrap would create the missing parents 0700: runs dropped to nobody could
            # not walk through them.
            for parent in reversed(Path(inside).parents[:-1]):
                if str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", host, inside]
            made.add(inside)
        for host, inside in self.private_binds:
            parent = str(Path(inside).parent)
            if parent not in made:
                made.add(parent)
                args += ["--perms", "0700", "--dir", parent]
            args += ["--bind", host, inside]
        for folder in sorted({*HIDDEN, *self.hide}):  # when inside something bound above
            if os.path.isdir(folder) and not os.path.islink(folder) and \
                    any(folder.startswith(b.rstrip("/") + "/") for b in bound):
                args += ["--tmpfs", folder]
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 "--unshare-cgroup-try", "--die-with-parent", "--new-session",
                 *_privilege_args(), "--chdir", "/tmp", *command]
        return args


# What every sandbox sees of the host: programs and shared libraries, nothing else.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
             "localtime", "hosts", "alternatives", "mime.types", "os-release",
             "debian_version", "ssl")
# The part of the curator package a worker imports (the rest of the checkout stays out).
WORKER_FILES = ("__init__.py", "errors.py", "execution")


def mounts_for(python: str | None) -> list[str]:
    """Host paths a worker for `python` needs, to mount read-only: that interpreter's
    paths (python_paths) and, the worker being curator's own code, the curator
    interpreter's, with the curator package narrowed to what the worker imports."""
    package = str(Path(__file__).resolve().parents[1])
    own = python is None or os.path.abspath(python) == os.path.abspath(sys.executable)
    paths = set(python_paths(None))
    if not own:
        paths.update(python_paths(python))
    inside = {p for p in paths if p == package or p.startswith(package + os.sep)}
    paths -= inside
    # The worker imports this very package (workers get its parent on PYTHONPATH), even
    # when the interpreter's own install of curator lives elsewhere.
    paths.update(os.path.join(package, name) for name in WORKER_FILES
                 if os.path.exists(os.path.join(package, name)))
    return sorted(paths)


def _needs_bind(path: str, extra_hidden: list[str]) -> bool:
    hidden = ("/tmp", "/dev/shm", *HIDDEN, *extra_hidden)
    return any(path == h or path.startswith(h.rstrip("/") + "/") for h in hidden) or \
        path.startswith("/tmp/")


# -- the environment and limits of a run ----------------------------------------------------


def base_env(home: str, python: str | None = None, plugins_autoload: bool = False) -> dict:
    """An environment built from scratch: nothing of the parent's leaks in."""
    bindir = os.path.dirname(python or sys.executable)
    env = {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "CUDA_VISIBLE_DEVICES": "",
        "MPLBACKEND": "Agg",
        "NO_COLOR": "1",
    }
    if not plugins_autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def count_tasks(uid: int) -> int:
    """Tasks (processes and threads) a uid owns on this machine: what RLIMIT_NPROC counts."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", "rb") as fh:
                status = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        owner = threads = None
        for line in status.splitlines():
            if line.startswith("Uid:"):
                owner = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
        if owner == uid:
            total += threads or 1
    return total


def vm_size_bytes() -> int:
    with open("/proc/self/status", "rb") as fh:
        for line in fh.read().decode().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def apply_rlimits(*, address_space: int, cpu_s: int, processes: int | None, file_bytes: int,
                  open_files: int) -> None:
    """Called in the run's own process, after dropping privileges and before its code.

    processes=None leaves RLIMIT_NPROC alone (a pids cgroup limits the run instead)."""
    limits = [(resource.RLIMIT_AS, address_space), (resource.RLIMIT_CPU, cpu_s),
              (resource.RLIMIT_NPROC, processes), (resource.RLIMIT_FSIZE, file_bytes),
              (resource.RLIMIT_NOFILE, open_files), (resource.RLIMIT_CORE, 0)]
    for which, value in limits:
        if value is None:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        hard_value = value + 1 if which == resource.RLIMIT_CPU else value
        if hard != resource.RLIM_INFINITY:
            hard_value = min(hard_value, hard)
        resource.setrlimit(which, (value, hard_value))
    # A write past RLIMIT_FSIZE fails with EFBIG instead of killing the run.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _prctl(option: int, arg: int, arg3: int = 0) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, arg, arg3, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def die_with_parent() -> None:
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def become_subreaper() -> None:
    """Orphans of our runs (setsid + double fork) get reparented to us, not to init."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def no_new_privileges() -> None:
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def not_dumpable() -> None:
    """Other processes of the same uid (the run's own children) cannot ptrace us or read
    /proc/<pid>/mem: the run's memory is out of reach of anything but the run itself."""
    _prctl(PR_SET_DUMPABLE, 0)


CLONE_NEWIPC = 0x08000000
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "i686": 288, "ppc64le": 271, "s390x": 280}


def new_ipc_namespace() -> bool:
    """A fresh IPC namespace for this process: SysV shared memory, semaphores and message
    queues of earlier runs are not visible, and this run's go when its last process ends.
    False when we lack the privilege (weak isolation as a normal user)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.unshare(CLONE_NEWIPC) == 0


def fresh_keyrings() -> bool:
    """Empty the run uid's persistent keyrings and join a new session keyring, so no key
    a previous run (of any engine) stored under this uid reaches this one."""
    number = SYS_KEYCTL.get(os.uname().machine)
    if number is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    ok = libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) >= 0
    for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        ok = libc.syscall(number, KEYCTL_CLEAR, ring) == 0 and ok
    return ok


CAP_DAC_READ_SEARCH = 2
PR_CAPBSET_DROP = 24
PR_SET_KEEPCAPS = 8
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_RAISE = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def drop_privileges(uid: int | None, read_grant: bool = False) -> None:
    """Switch to `uid` for good. With `read_grant` the process keeps one capability,
    CAP_DAC_READ_SEARCH (read any file, search any folder), also across exec, and no
    other: the interpreter under /root stays readable, while root's processes (their
    /proc entries, signals) and writing root's files stay out of reach."""
    if uid is None:
        return
    if read_grant:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
        for cap in range(last + 1):   # nothing but the grant can come back through exec
            if cap != CAP_DAC_READ_SEARCH:
                _prctl(PR_CAPBSET_DROP, cap)
        _prctl(PR_SET_KEEPCAPS, 1)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if read_grant:
        _prctl(PR_SET_KEEPCAPS, 0)
        _capset(1 << CAP_DAC_READ_SEARCH)
        _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_DAC_READ_SEARCH)


def _capset(mask: int, inheritable: int | None = None) -> None:
    """Effective and permitted capabilities set to `mask`, inheritable to `inheritable`
    (`mask` unless given)."""
    inheritable = mask if inheritable is None else inheritable
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    low, high = mask & 0xFFFFFFFF, mask >> 32
    data = (ctypes.c_uint32 * 6)(low, low, inheritable & 0xFFFFFFFF,
                                 high, high, inheritable >> 32)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


# -- the solution process writes its own folder and nothing else ---------------------------

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 0x400, 0x800, 0x200000, 0x1000000
MS_REMOUNT, MS_BIND, MS_REC, MS_SLAVE, MS_SHARED = 0x20, 0x1000, 0x4000, 0x80000, 0x100000
MOUNT_ATTR_RDONLY = 0x1
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_MOUNT_SETATTR = 442   # one number on every architecture (new syscalls since 5.1)
# mountinfo's per-mount options that a remount must repeat (locked ones cannot change)
_MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
                "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME,
                "strictatime": MS_STRICTATIME}
SHM = "/dev/shm"


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount_setattr(libc, path: str, flags: int, attr_set: int = 0, attr_clr: int = 0) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    _check(libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), flags,
                        ctypes.byref(attr), ctypes.sizeof(attr)), f"mount_setattr {path}")


def _mounts() -> list[tuple[str, set[str]]]:
    """(mount point, per-mount options) of this mount namespace, parents first."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            fields = line.split(" ")
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            found.append((point, set(fields[5].split(","))))
    return found


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _remount(libc, point: str, options: set[str], readonly: bool) -> None:
    """The mount at `point` read-only (or writable), keeping its other per-mount flags
    (those an unprivileged namespace inherited locked must be repeated as they are)."""
    flags = MS_BIND | MS_REMOUNT | (MS_RDONLY if readonly else 0)
    for name in options:
        flags |= _MOUNT_FLAGS.get(name, 0)
    _check(libc.mount(None, point.encode(), None, flags, None), f"remount {point}")


def confine_writes(own: str, follow: str | None = None, proc_view: bool = False) -> None:
    """From here on this process (and what it starts) writes under `own` and nowhere
    else: a mount namespace of its own in which every mount is read-only but `own` (bound
    onto itself), and /dev/shm is a folder of `own` (POSIX shared memory and semaphores of
    torch's and Python's multiprocessing). Device nodes (/dev/null) stay writable: a
    read-only mount refuses changes to files, not writes to devices.

    Root (the privileged sandbox; the caller drops to the run's uid after) unshares the
    mount namespace; an ordinary user also unshares a user namespace that maps its uid to
    itself, so the mounts can change, and then gives up the capabilities that namespace
    gave it. The mounts inherited from the sandbox are then locked: nothing in the
    process, nor in a namespace it makes, can make them writable again, unmount them or
    reach what they cover. OSError when the kernel refuses (no user namespaces); the
    process is then as it was, as far as its mounts go.

    Mounts made later under `follow` (a mount point; root only) in the namespace this
    process leaves still appear in its own: the private views a judge mounts in its run
    folder after the solution process started (`views.repo_view`: a test hands the
    candidate a path into the judge's view of the checkout). Nothing this process mounts
    reaches any other namespace (its mounts are slaves).

    With `proc_view`, /proc is bound writable at `<own>/.proc` (PROC_VIEW) in that
    namespace: `CallMounts.start` writes its user namespace's id maps there, and makes it
    read-only then."""
    libc = ctypes.CDLL(None, use_errno=True)
    own = os.path.realpath(own)
    root = os.geteuid() == 0
    if root:
        if follow is not None:
            libc.mount(None, follow.encode(), None, MS_SHARED, None)   # at worst: not followed
        _check(libc.unshare(CLONE_NEWNS), "unshare")
    else:
        uid, gid = os.geteuid(), os.getegid()
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    try:
        if not root:
            _map_own_ids(libc, uid, gid)
        _read_only_but(libc, own, root, proc_view)
    finally:   # also when it failed half way: nothing of that namespace's power is kept
        if not root:
            _capset(0)   # every capability the new user namespace gave


def _map_own_ids(libc, uid: int, gid: int, proc: str = "/proc") -> None:
    """The new user namespace maps this process's uid and gid to themselves (written
    through `proc`, a view of /proc where /proc itself is read-only by then)."""
    # /proc/self is its own only while it is dumpable (not after a change of uid)
    dumpable = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    _prctl(PR_SET_DUMPABLE, 1)
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(os.path.join(proc, "self", name), "w") as fh:
                fh.write(text)
    finally:
        if dumpable != 1:
            _prctl(PR_SET_DUMPABLE, 0)


def _read_only_but(libc, own: str, root: bool, proc_view: bool = False) -> None:
    """In a fresh mount namespace: every mount read-only but `own` (see confine_writes)."""
    _check(libc.mount(None, b"/", None, MS_REC | MS_SLAVE, None), "slave /")
    if proc_view:
        view = os.path.join(own, PROC_VIEW)
        os.makedirs(view, exist_ok=True)
        _check(libc.mount(b"/proc", view.encode(), None, MS_BIND | MS_REC, None),
               f"bind {view}")
    shm = os.path.join(own, ".shm")
    if os.path.isdir(SHM) and not os.path.isdir(shm):
        os.mkdir(shm, 0o700)
        if root:   # the run's uid's, as its folder (the caller drops to that uid)
            info = os.stat(own)
            os.chown(shm, info.st_uid, info.st_gid)
    _check(libc.mount(own.encode(), own.encode(), None, MS_BIND | MS_REC, None), f"bind {own}")
    before = _mounts()
    writable = [p for p, opts in before if _inside(p, own) and "ro" not in opts]
    try:
        _mount_setattr(libc, "/", AT_RECURSIVE, attr_set=MOUNT_ATTR_RDONLY)
        for point in writable:
            _mount_setattr(libc, point, 0, attr_clr=MOUNT_ATTR_RDONLY)
    except OSError as exc:
        if exc.errno not in (38, 22):   # ENOSYS, EINVAL: a kernel before 5.12
            raise
        for point, options in before:
            if "ro" not in options and not _inside(point, own):
                try:
                    _remount(libc, point, options, readonly=True)
                except OSError:
                    if os.path.exists(point):
                        raise
                    # covered by a later mount (its path now names that one)
    if os.path.isdir(SHM):
        _check(libc.mount(shm.encode(), SHM.encode(), None, MS_BIND, None), "bind /dev/shm")


@functools.cache
def confinement_works(isolation: str = "strong") -> bool:
    """Whether a run's solution process can confine its writes (`confine_writes`) where
    runs happen at this isolation level (inside the sandbox when it is strong): probed
    once in a throwaway process."""
    code = ("import os, sys, tempfile\n"
            "from curator.execution import sandbox\n"
            "own = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()\n"
            "sandbox.confine_writes(own)\n"
            "open(os.path.join(own, 'x'), 'w').close()\n"
            "try:\n"
            "    open(os.path.join(os.path.dirname(own), 'x-' + str(os.getpid())), 'w')\n"
            "except OSError:\n"
            "    sys.exit(0)\n"
            "sys.exit(1)\n")
    return _probe_passes(code, [], isolation)


def _probe_passes(code: str, args: list[str], isolation: str) -> bool:
    """Whether `code` (run with `args`) exits 0 in a throwaway process where runs happen
    at this isolation level: inside the sandbox, in its private /tmp, when it is strong;
    otherwise given a temporary folder of the host's as its last argument (removed
    afterwards)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-S", "-c", code, *args]
        if isolation == "strong":
            command = SandboxSpec().argv(command)
        else:
            command.append(folder)
        try:
            done = subprocess.run(command, capture_output=True, timeout=60, check=False,
                                  env=env)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


@functools.cache
def call_layers_work(isolation: str = "strong") -> bool:
    """Whether a run's solution process gets its per-call layers (`CallMounts`) where runs
    happen at this isolation level, set up as a run's is (`worker._solution_process`:
    confined, dropped to the run's uid, with the read grant where runs need it): probed
    once in a throwaway process, which writes a file into a judge's folder through its
    overlay, finds it in its own upper layer, and the judge's folder without it once the
    overlay is gone."""
    code = ("import os, sys, tempfile\n"
            "from curator.execution import sandbox\n"
            "grant, uid = sys.argv[1] == '1', sandbox.run_uid()\n"
            "base = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()\n"
            "os.chmod(base, 0o755)\n"
            "own, judge = os.path.join(base, 'own'), os.path.join(base, 'judge')\n"
            "folder = os.path.join(judge, 'work')\n"
            "os.makedirs(folder)\n"
            "os.mkdir(own, 0o700)\n"
            "if uid is not None:\n"
            "    os.chown(own, uid, uid)\n"
            "sandbox.confine_writes(own, proc_view=True)\n"
            "mounts = None\n"
            "if grant and uid is not None:\n"
            "    mounts = sandbox.CallMounts.start_mapping_root(own, judge, uid)\n"
            "sandbox.drop_privileges(uid, grant)\n"
            "if not grant:\n"
            "    mounts = sandbox.CallMounts.start(own, judge)\n"
            "[(_, upper)] = mounts.mount([folder])\n"
            "with open(os.path.join(folder, 'saved.bin'), 'wb') as out:\n"
            "    out.write(b'ok')\n"
            "with open(os.path.join(upper, 'saved.bin'), 'rb') as saved:\n"
            "    layered = saved.read() == b'ok'\n"
            "mounts.unmount()\n"
            "mounts.mount([])\n"   # answered once the overlays are gone
            "sys.exit(0 if layered and not os.listdir(folder) else 1)\n")
    return _probe_passes(code, ["1" if needs_read_grant(isolation) else "0"], isolation)


# -- what a call writes where the judge could have: the solution's own layers ---------------

PROC_VIEW = ".proc"            # /proc bound at <own>/.proc until the id maps are written
CALL_LAYERS = ".call-layers"   # <own>/.call-layers/<hash>/{upper,work}: a folder's layers
CAP_DAC_OVERRIDE, CAP_SYS_ADMIN = 1, 21
HELPER_CAPS = (CAP_DAC_OVERRIDE, CAP_SYS_ADMIN)
PR_CAP_AMBIENT_CLEAR_ALL = 4


def _plain(path) -> bool:
    """A str the helper's messages can carry (`mount_helper.pack`): no NUL."""
    return isinstance(path, str) and "\0" not in path


class CallMounts:
    """The solution process's writable overlays over the judge's folders, one call at a
    time. `start` (after `confine_writes(..., proc_view=True)` and the drop to the run's
    uid, before the candidate is imported) enters a user and mount namespace of the
    process's own, nested in the confined one: every mount it inherits is locked as it
    is (read-only stays read-only; nothing can be unmounted to show what it covers). It
    spawns a helper (`mount_helper.py`) that keeps two of that namespace's capabilities
    and mounts nothing but overlays, over folders of the judge's run folder
    (`judge_root`), whose upper and work layers are folders of the solution's own
    (`<own>/.call-layers`); the process itself drops them before the candidate runs. Through an overlay the call reads the
    judge's folder as before and whatever it writes lands in its own upper layer, which
    the solution process sends to the judge as data after the call
    (`boundary.call_files`); the judge decides what it writes itself. A file of the
    judge's stays as it was (the layer's copy of it is the solution's)."""

    def __init__(self, sock: socket.socket, pid: int):
        self.sock, self.pid = sock, pid
        self.mounted: list[tuple[str, str]] = []   # (judge folder, its upper layer)

    @classmethod
    def start(cls, own: str, judge_root: str, python: str | None = None) -> CallMounts:
        libc = ctypes.CDLL(None, use_errno=True)
        own = os.path.realpath(own)
        uid, gid = os.geteuid(), os.getegid()
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        try:
            view = os.path.join(own, PROC_VIEW)
            _map_own_ids(libc, uid, gid, proc=view)
            _mount_setattr(libc, view, AT_RECURSIVE, attr_set=MOUNT_ATTR_RDONLY)
            ours, pid = cls._spawn(own, judge_root, python, uid)
        finally:   # the process keeps nothing of the new namespace's power
            _capset(0)
        return cls(ours, pid)

    @classmethod
    def start_mapping_root(cls, own: str, judge_root: str, uid: int,
                           python: str | None = None) -> CallMounts:
        """`start` for a process that is still root and will keep the right to read
        every file (`drop_privileges(uid, read_grant=True)`, called after this, in the
        new namespace): that namespace maps root and `uid`, so the grant still reaches
        root's files there (a pyenv Python under /root), and `/bin/sh`, spawned before
        and left in the namespace above, writes its maps (root's map may name two
        ids) through the view of /proc `confine_writes(..., proc_view=True)` bound. The helper runs as the namespace's root and gives the run's uid its layers.
        OSError when the namespace cannot be made (the process is as it was); a process
        left in a namespace without maps cannot go on: SystemExit."""
        libc = ctypes.CDLL(None, use_errno=True)
        own = os.path.realpath(own)
        read_end, write_end = os.pipe()
        view = os.path.join(own, PROC_VIEW)   # /proc is read-only by now
        script = ('read go && printf "0 0 1\\n%s %s 1\\n" "$2" "$2" > "$3/$1/uid_map" && '
                  'printf "0 0 1\\n%s %s 1\\n" "$2" "$2" > "$3/$1/gid_map"')
        writer = subprocess.Popen(["/bin/sh", "-c", script, "sh", str(os.getpid()), str(uid),
                                   view],
                                  stdin=read_end, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, close_fds=True,
                                  env={"PATH": "/usr/bin:/bin"})
        os.close(read_end)
        try:
            _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
        except OSError:
            os.close(write_end)
            writer.wait()
            raise
        os.write(write_end, b"go\n")
        os.close(write_end)
        if writer.wait() != 0:
            raise SystemExit("the solution process's user namespace got no id maps")
        _mount_setattr(libc, view, AT_RECURSIVE, attr_set=MOUNT_ATTR_RDONLY)
        ours, pid = cls._spawn(own, judge_root, python, uid)
        return cls(ours, pid)

    @staticmethod
    def _spawn(own: str, judge_root: str, python: str | None, owner: int):
        """The helper, spawned in the namespace this process just entered."""
        layers = os.path.join(own, CALL_LAYERS)
        os.makedirs(layers, 0o700, exist_ok=True)
        if os.geteuid() != owner:
            os.chown(layers, owner, owner)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # The helper is a small interpreter of its own (`mount_helper`), spawned
        # (vfork and exec: a fork of a warm process copies its page tables, 8 ms for
        # torch's) with the capabilities it needs in the namespace, as ambient ones
        # that outlive its exec: CAP_SYS_ADMIN to mount, CAP_DAC_OVERRIDE for what
        # overlayfs does in its work folder (mode 000); both are worth nothing over
        # a file whose owner the namespace does not map, the judge's as root.
        full = (1 << (int(Path("/proc/sys/kernel/cap_last_cap").read_text()) + 1)) - 1
        _capset(full, sum(1 << cap for cap in HELPER_CAPS))
        for cap in HELPER_CAPS:
            _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap)
        try:
            helper = subprocess.Popen(
                [python or sys.executable, "-S", "-I", "-B",
                 str(Path(__file__).with_name("mount_helper.py")),
                 str(theirs.fileno()), str(os.getpid()), layers,
                 os.path.realpath(judge_root), own, str(owner)],
                pass_fds=(theirs.fileno(),), close_fds=True, env={},
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        finally:
            _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
            theirs.close()
        return ours, helper.pid

    def _ask(self, fields: list[str]) -> list[str]:
        """The helper's answer's fields (`mount_helper.pack`), [] when it has none."""
        try:
            self.sock.sendall(mount_helper.pack(fields))
            data = b""
            while True:
                answer, _ = mount_helper.unpack(data)
                if answer is not None:
                    return answer
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    return []
                data += chunk
        except (OSError, ValueError):
            return []

    def mount(self, folders: list[str], kept: list | None = None) -> list[tuple[int, str]]:
        """Overlays over these folders of the judge's (those it accepts); (index in
        `folders`, the upper layer) of each. What was mounted before goes first. A
        folder's layer is kept from call to call, holding what the judge wrote of it and
        still has as written (`kept[i]`: paths relative to `folders[i]`), and nothing
        else: the call sees the judge's folder, and writes again what it wrote before
        (a file the judge wrote is the judge uid's, which an overlay of the solution's
        cannot copy up)."""
        kept = kept or []
        fields = ["mount", str(len(folders))]
        for index, folder in enumerate(folders):
            paths = kept[index] if index < len(kept) and isinstance(kept[index], list) else []
            paths = [p for p in paths if _plain(p)]
            fields += [folder if _plain(folder) else "", str(len(paths)), *paths]
        answer = self._ask(fields)
        pairs = zip(answer[0::2], answer[1::2]) if len(answer) % 2 == 0 else ()
        mounted = [(int(i), upper) for i, upper in pairs
                   if i.isdigit() and int(i) < len(folders)]
        self.mounted = [(folders[i], upper) for i, upper in mounted]
        return mounted

    def unmount(self) -> None:
        """The overlays go (the helper unmounts them while the judge reads the reply;
        the next request waits for that)."""
        if self.mounted:
            self.mounted = []
            try:
                self.sock.sendall(mount_helper.pack(["unmount"]))
            except OSError:
                pass
