"""Test runs: seed derivation, the run record, its result file and parallel execution.

Each run is one subprocess in its own process group, output (stdout and stderr) to its own log
file; a run that outlives its timeout gets SIGTERM, then SIGKILL, on its whole group. When it
ends, its verdict is written atomically to its result file next to the log
(`<test>-<seed>.result.json`); the backends (this module's Executor, regresslib.slurm) hand
the regression the same Run records. Runs start in plan order on `jobs` workers; once the
budget is spent (or, with fail_fast, after the first failure) runs not yet started are marked
skipped."""

import ctypes
import json
import os
import shlex
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from . import ROOT
from .logparse import judge

MASK64 = (1 << 64) - 1
FAIL_FAST_REASON = "stopped after the first failure (--fail-fast)"


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def derive_seed(master, test, index):
    """Seed of the index-th run of a test: 32 bits of splitmix64(master ^ FNV-1a(test#index)),
    so every test gets its own seeds and one master seed reproduces the whole set."""
    return splitmix64(master ^ fnv1a64(f"{test}#{index}")) & 0xFFFFFFFF


def display_path(path):
    """Path relative to the repository root when inside it (runs execute from the root)."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


@dataclass
class Run:
    index: int
    test: str
    seed: int
    build: str
    program: str             # absolute path
    args: list               # extra arguments after --test/--seed (plusargs)
    timeout: float
    log: str                 # absolute path
    cov_out: str = ""        # coverage file this run writes, if any
    status: str = "pending"  # pass | fail | crash | timeout | error | skipped
    message: str = ""
    key: str = ""
    returncode: object = None
    duration: float = 0.0
    errors: int = 0
    fatals: int = 0
    warnings: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def name(self):
        return f"{self.test}-{self.seed}"

    @property
    def failed(self):
        return self.status in ("fail", "crash", "timeout", "error")

    def argv(self):
        return [display_path(self.program), "--test", self.test, "--seed", str(self.seed)] + self.args

    def reproduce(self):
        """One-line command that repeats this run (from the repository root)."""
        return shlex.join([display_path(self.program), "--test", self.test, "--seed", str(self.seed)] +
                          [_display_arg(a) for a in self.args])

    def spec(self):
        """What a run needs to execute elsewhere (a Slurm task): the inverse of from_spec."""
        return {"index": self.index, "test": self.test, "seed": self.seed, "build": self.build,
                "program": self.program, "args": self.args, "timeout": self.timeout,
                "log": self.log, "cov_out": self.cov_out}

    @classmethod
    def from_spec(cls, d):
        return cls(d["index"], d["test"], d["seed"], d["build"], d["program"], list(d["args"]),
                   d["timeout"], d["log"], d.get("cov_out", ""))

    def to_json(self):
        return {"test": self.test, "seed": self.seed, "build": self.build, "status": self.status,
                "message": self.message, "key": self.key, "returncode": self.returncode,
                "duration": round(self.duration, 3), "errors": self.errors, "fatals": self.fatals,
                "warnings": self.warnings, "log": display_path(self.log),
                "reproduce": self.reproduce(), "cov_out": display_path(self.cov_out) if self.cov_out else ""}


def _display_arg(a):
    # +name=/abs/path -> +name=<path relative to the root>
    if a.startswith("+") and "=" in a:
        k, v = a.split("=", 1)
        if os.path.isabs(v):
            return f"{k}={display_path(v)}"
    return a


# ------------------------------------------------------------------------------ result files

RESULT_FIELDS = ("status", "message", "key", "returncode", "duration", "errors", "fatals", "warnings")


def result_path(log):
    """The result file of the run whose log is `log`: next to it, `.result.json`."""
    return (log[:-4] if log.endswith(".log") else log) + ".result.json"


def atomic_write_json(path, obj):
    """Writes obj to path so that a reader sees either no file or the whole of it (a temporary
    file in the same directory, flushed to disk, then renamed over path)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_result(run):
    rec = {"test": run.test, "seed": run.seed}
    rec.update({k: getattr(run, k) for k in RESULT_FIELDS})
    atomic_write_json(result_path(run.log), rec)


def read_result(run):
    """Fills in run's verdict from its result file; False when there is none (or it belongs to
    another run)."""
    try:
        with open(result_path(run.log)) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return False
    if rec.get("test") != run.test or rec.get("seed") != run.seed or rec.get("status") not in (
            "pass", "fail", "crash", "timeout", "error", "skipped"):
        return False
    for k in RESULT_FIELDS:
        setattr(run, k, rec[k])
    return True


def clear_result(run):
    """Removes a result file left by an earlier regression in the same output directory."""
    try:
        os.remove(result_path(run.log))
    except FileNotFoundError:
        pass


class Executor:
    """Runs Run records in parallel; kill() ends every running process group."""

    def __init__(self, jobs, budget_s=None, fail_fast=False, on_done=None):
        self.jobs = max(1, jobs)
        self.budget_s = budget_s
        self.fail_fast = fail_fast
        self.on_done = on_done
        self.stop = threading.Event()
        self.stop_reason = ""
        self._lock = threading.Lock()
        self._procs = {}
        self._t0 = None

    def run_all(self, runs):
        self._t0 = time.monotonic()
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = [pool.submit(self._one, r) for r in runs]
            try:
                for f in futures:
                    f.result()
            except KeyboardInterrupt:
                self._halt("interrupted")
                self.kill()
                raise
        return runs

    def _halt(self, reason):
        with self._lock:
            if not self.stop.is_set():
                self.stop_reason = reason
                self.stop.set()

    def kill(self):
        """Ends every running test (their runs are reported as skipped: interrupted)."""
        with self._lock:
            procs = list(self._procs.values())
        for run, p in procs:
            run.extra["interrupted"] = True
            _kill_group(p)

    def _one(self, run):
        if self.stop.is_set():
            return self._skip(run, self.stop_reason)
        if self.budget_s is not None and time.monotonic() - self._t0 > self.budget_s:
            self._halt(f"budget of {self.budget_s / 60:g} min spent")
            return self._skip(run, self.stop_reason)
        execute(run, self._procs, self._lock)
        if run.failed and self.fail_fast:
            self._halt(FAIL_FAST_REASON)
        if self.on_done:
            self.on_done(run)

    def _skip(self, run, reason):
        run.status = "skipped"
        run.message = f"not run: {reason}"
        if self.on_done:
            self.on_done(run)


def _kill_group(p):
    """SIGTERM to the run's process group, SIGKILL if it is still there after 3 s."""
    if p.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _die_with_parent():
    """preexec_fn: the run gets SIGKILL when the process that started it dies (PR_SET_PDEATHSIG),
    so killing a Slurm task's runner ends its simulation too."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)    # 1 = PR_SET_PDEATHSIG


def execute(run, registry=None, lock=None, die_with_parent=False):
    """Runs one test program to completion or timeout, fills in the verdict and writes the
    result file (not for a run cut short by an interrupt)."""
    os.makedirs(os.path.dirname(run.log), exist_ok=True)
    t0 = time.monotonic()
    timed_out = False
    with open(run.log, "wb") as logf:
        try:
            p = subprocess.Popen(run.argv(), stdout=logf, stderr=subprocess.STDOUT, cwd=ROOT,
                                 stdin=subprocess.DEVNULL, start_new_session=True,
                                 preexec_fn=_die_with_parent if die_with_parent else None)
        except OSError as e:
            run.status = "error"
            run.message = run.key = f"RUNNER [LAUNCH] cannot run {display_path(run.program)}: {e.strerror}"
            run.duration = time.monotonic() - t0
            write_result(run)
            return run
        if registry is not None:
            with lock:
                registry[id(run)] = (run, p)
        try:
            p.wait(timeout=run.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(p)
        finally:
            if registry is not None:
                with lock:
                    registry.pop(id(run), None)
    run.duration = time.monotonic() - t0
    run.returncode = p.returncode
    with open(run.log, "r", errors="replace") as f:
        out = f.read()
    v = judge(out, p.returncode, run.seed, timed_out=timed_out, timeout=run.timeout)
    run.status, run.message, run.key = v.status, v.message, v.key
    run.errors, run.fatals, run.warnings = v.errors, v.fatals, v.warnings
    if run.extra.get("interrupted"):
        run.status, run.message, run.key = "skipped", "not finished: interrupted", ""
    else:
        write_result(run)
    return run
