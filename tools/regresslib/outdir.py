"""Output folders of tools/regress and tools/interop/run: one new folder per run
(<base>/<name>-<YYYYmmdd-HHMMSS>[-N], created atomically, so two runs started in the same second
still get two folders), a lock on the folder for as long as the run lives (a second run given the
same folder stops with a one-line error), and the symlink <base>/latest, switched atomically to a
run's folder once its reports are written."""

import datetime
import errno
import fcntl
import os

from . import ToolError

LOCK_NAME = ".lock"
LATEST = "latest"


def new_run_dir(base, name, now=None):
    """Creates and returns a folder no other run has: <base>/<name>-<stamp>, else -2, -3, ..."""
    os.makedirs(base, exist_ok=True)
    stamp = (now or datetime.datetime.now()).strftime("%Y%m%d-%H%M%S")
    first = os.path.join(base, f"{name}-{stamp}")
    path, n = first, 2
    while True:
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            path = f"{first}-{n}"
            n += 1


class RunLock:
    """An exclusive flock on <folder>/.lock, held until release() or the process ends (the
    kernel drops it then, so a crashed run leaves no stale lock). The file holds the owner's pid
    and command for the error message of the run that finds it taken."""

    def __init__(self, folder, what):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, LOCK_NAME)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            owner = self._owner()
            os.close(self.fd)
            self.fd = None
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise ToolError(f"{folder} is in use by another run{owner}; wait for it or choose "
                                "another output folder") from None
            raise ToolError(f"cannot lock {self.path}: {e.strerror}") from None
        os.ftruncate(self.fd, 0)
        os.write(self.fd, f"{os.getpid()} {what}\n".encode())

    def _owner(self):
        try:
            with open(self.path) as f:
                text = f.read().strip()
        except OSError:
            return ""
        pid, _, what = text.partition(" ")
        return f" (pid {pid}: {what})" if pid.isdigit() else ""

    def release(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def discard_if_unused(folder):
    """Removes a run's folder that holds nothing but (at most) its lock: the run stopped before
    writing anything. True when it did."""
    try:
        if not set(os.listdir(folder)) <= {LOCK_NAME}:
            return False
        if os.path.exists(os.path.join(folder, LOCK_NAME)):
            os.remove(os.path.join(folder, LOCK_NAME))
        os.rmdir(folder)
        return True
    except OSError:
        return False


def update_latest(folder):
    """Points <parent>/latest at folder (relative link, replaced atomically). Returns None, or
    the reason it could not."""
    link = os.path.join(os.path.dirname(folder), LATEST)
    tmp = f"{link}.tmp{os.getpid()}"
    try:
        if os.path.lexists(tmp):
            os.remove(tmp)
        os.symlink(os.path.basename(folder), tmp)
        os.replace(tmp, link)
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        return f"could not update {link}: {e.strerror}"
    return None
