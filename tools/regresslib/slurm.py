"""Slurm backend of tools/regress: the runs of a regression as a Slurm job array.

The controller (tools/regress --backend slurm) has already built the programs; the repository,
the build directory and the output directory must be visible at the same paths on every node
(a shared file system). It splits the runs into shards (round-robin, at most runs_per_task per
shard), writes them to a manifest and submits one array job whose task i runs shard i one run
after another (`python3 -m regresslib.slurm <manifest>`). Each run writes its result file
atomically next to its log (regresslib.runner.write_result); the controller reads those files,
and asks the scheduler (squeue, never the accounting) only whether a task has ended. A task
that ended while some of its runs have no result file (node failure, time limit, preemption,
a killed task) gets those runs resubmitted once, with the same seeds; a run lost a second time
is an error (RUNNER [LOST]). A failed run has a result and is never resubmitted. A stop
(budget spent, --fail-fast) is a file the tasks look at before each run, plus scancel of the
tasks still pending; an interrupt (Ctrl-C) cancels every task. See docs/regression.md."""

import getpass
import json
import math
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from . import ROOT, ToolError
from .runner import (FAIL_FAST_REASON, Run, atomic_write_json, display_path, execute, read_result, result_path,
                     write_result)

# squeue states of a task that has not ended; any other state, or not being listed, is an end
ACTIVE_STATES = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED",
                           "RESIZING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SIGNALING",
                           "STAGE_OUT", "STOPPED", "SPECIAL_EXIT", "RESV_DEL_HOLD"})
LOST_KEY = "RUNNER [LOST] no result: task lost twice"
TIME_MARGIN_MIN = 5          # default task time limit: its runs' timeouts plus this
SQUEUE_GIVE_UP_S = 600       # squeue failing this long ends the regression


@dataclass
class SlurmOptions:
    partition: str = ""
    time_limit: int = 0          # minutes per task; 0: the shard's run timeouts + TIME_MARGIN_MIN
    throttle: int = 0            # at most this many tasks at once (sbatch --array=...%N); 0: no limit
    runs_per_task: int = 8
    sbatch_args: list = field(default_factory=list)
    poll_s: float = 2.0          # squeue and result files are looked at this often
    grace_s: float = 10.0        # after a task ended, its result files may take this long to show


def _n(k, what):
    return f"{k} {what}{'s' if k != 1 else ''}"


def shard(runs, per_task):
    """Splits runs into ceil(len / per_task) shards, round-robin, so that every task gets runs
    of every test (similar lengths) and none more than per_task."""
    if not runs:
        return []
    n = math.ceil(len(runs) / per_task)
    return [runs[i::n] for i in range(n)]


def task_minutes(runs, opts):
    if opts.time_limit:
        return opts.time_limit
    return math.ceil(sum(r.timeout for r in runs) / 60) + TIME_MARGIN_MIN


def _indices(spec):
    """'3' or '[0-3,5%2]' -> [3] or [0, 1, 2, 3, 5]."""
    spec = spec.strip("[]").split("%")[0]
    out = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def parse_squeue(text, jobs):
    """{(job, index): state} from `squeue --array --format='%i %T'` output, for the given job
    ids. Pending elements may still be shown together ('12_[3-7%2] PENDING')."""
    states = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2 or "_" not in f[0]:
            continue
        job, idx = f[0].split("_", 1)
        if job not in jobs:
            continue
        try:
            for i in _indices(idx):
                states[(job, i)] = f[1]
        except ValueError:
            continue
    return states


class SlurmCli:
    """sbatch, squeue and scancel as the user would type them (SLURM_CONF in the environment
    selects the cluster)."""

    def __init__(self, user=None):
        self.user = user or getpass.getuser()
        self.last_error = ""

    def submit(self, script, ntasks, opts, minutes, output, name):
        array = f"0-{ntasks - 1}" + (f"%{opts.throttle}" if opts.throttle else "")
        cmd = ["sbatch", "--parsable", f"--array={array}", f"--job-name={name}", f"--output={output}",
               "--no-requeue", "--ntasks=1", "--cpus-per-task=1", f"--time={minutes}", f"--chdir={ROOT}"]
        if opts.partition:
            cmd.append(f"--partition={opts.partition}")
        cmd += list(opts.sbatch_args) + [script]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ToolError(f"sbatch: {e}") from None
        job = p.stdout.strip().split(";")[0]
        if p.returncode != 0 or not job.isdigit():
            msg = (p.stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1]
            raise ToolError(f"sbatch failed: {msg}")
        return job

    def states(self, jobs):
        """{(job, index): state} of the listed tasks; None when squeue failed."""
        cmd = ["squeue", "--noheader", "--array", "--states=all", f"--user={self.user}",
               "--format=%i %T"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            self.last_error = str(e)
            return None
        if p.returncode != 0:
            self.last_error = (p.stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1]
            return None
        return parse_squeue(p.stdout, set(jobs))

    def cancel(self, jobs, pending_only=False):
        if not jobs:
            return
        cmd = ["scancel"] + (["--state=PENDING"] if pending_only else []) + list(jobs)
        try:
            subprocess.run(cmd, capture_output=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            pass


@dataclass
class Task:
    job: str
    index: int
    runs: list
    attempt: int
    ended_at: float = None
    state: str = ""
    done: bool = False

    @property
    def name(self):
        return f"{self.job}_{self.index}"


class SlurmSession:
    """The Slurm side of one regression: options, the directory of manifests, scripts and task
    output (<out>/slurm) and what was submitted (for results.json)."""

    def __init__(self, opts, out, cli=None, python=None):
        self.opts = opts
        self.dir = os.path.join(out, "slurm")
        self.cli = cli or SlurmCli()
        self.python = python or sys.executable
        self.jobs = []
        self.tasks = 0
        self.resubmitted = []    # {"task", "state", "runs", "as"}
        self.lost_twice = 0
        self._n = 0

    def executor(self, budget_s=None, fail_fast=False, on_done=None):
        return SlurmExecutor(self, budget_s, fail_fast, on_done)

    def info(self):
        o = self.opts
        return {"name": "slurm", "jobs": self.jobs, "tasks": self.tasks,
                "runs_per_task": o.runs_per_task, "partition": o.partition,
                "time_limit_min": o.time_limit or None, "throttle": o.throttle or None,
                "resubmitted": self.resubmitted, "lost_twice": self.lost_twice}

    def submit(self, runs, attempt, stop_file, fail_fast=False):
        """Submits runs as one array job (shard i -> task i); returns its tasks."""
        self._n += 1
        os.makedirs(os.path.join(self.dir, "tasks"), exist_ok=True)
        name = f"submit{self._n}"
        shards = shard(runs, self.opts.runs_per_task)
        manifest = os.path.join(self.dir, f"{name}.json")
        atomic_write_json(manifest, {"stop_file": stop_file, "attempt": attempt, "fail_fast": fail_fast,
                                     "tasks_dir": os.path.join(self.dir, "tasks"),
                                     "shards": [[r.spec() for r in s] for s in shards]})
        script = os.path.join(self.dir, f"{name}.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n"
                    f"# tools/regress --backend slurm: array task i runs shard i of {name}.json\n"
                    f"cd {shlex.quote(ROOT)} || exit 1\n"
                    f"PYTHONPATH={shlex.quote(os.path.join(ROOT, 'tools'))}\n"
                    "export PYTHONPATH\n"
                    f"exec {shlex.quote(self.python)} -m regresslib.slurm {shlex.quote(manifest)}\n")
        os.chmod(script, 0o755)
        minutes = max(task_minutes(s, self.opts) for s in shards)
        job = self.cli.submit(script, len(shards), self.opts, minutes,
                              os.path.join(self.dir, "task-%A_%a.out"), "srnic-regress")
        self.jobs.append(job)
        self.tasks += len(shards)
        print(f"regress: Slurm job {job}: {_n(len(runs), 'run')} in {_n(len(shards), 'array task')} "
              f"(time limit {minutes} min{', partition ' + self.opts.partition if self.opts.partition else ''}"
              f"{', at most %d at once' % self.opts.throttle if self.opts.throttle else ''}; "
              f"task output {display_path(self.dir)}/task-{job}_<i>.out)", flush=True)
        return [Task(job, i, s, attempt) for i, s in enumerate(shards)]


class SlurmExecutor:
    """Runs Run records as Slurm array tasks; the same interface as runner.Executor."""

    def __init__(self, session, budget_s=None, fail_fast=False, on_done=None):
        self.s = session
        self.budget_s = budget_s
        self.fail_fast = fail_fast
        self.on_done = on_done
        self.stop_reason = ""
        self._stop_sent = False

    def run_all(self, runs):
        if not runs:
            return runs
        s = self.s
        t0 = time.monotonic()
        stop_file = os.path.join(s.dir, f"stop{s._n + 1}")
        waiting = {id(r) for r in runs}
        tasks = s.submit(runs, 1, stop_file, self.fail_fast)
        squeue_ok = time.monotonic()
        try:
            while True:
                self._collect(runs, waiting)
                self._check_stop(t0, tasks, stop_file)
                active = [t for t in tasks if not t.done]
                if not active:
                    break
                states = s.cli.states({t.job for t in active})
                now = time.monotonic()
                if states is None:
                    if now - squeue_ok > SQUEUE_GIVE_UP_S:
                        raise ToolError(f"squeue has failed for {SQUEUE_GIVE_UP_S // 60} minutes "
                                        f"({s.cli.last_error}); the array tasks were cancelled")
                    time.sleep(s.opts.poll_s)
                    continue
                squeue_ok = now
                lost = []
                for t in active:
                    st = states.get((t.job, t.index))
                    if st in ACTIVE_STATES:
                        continue
                    if t.ended_at is None:
                        t.ended_at, t.state = now, st or "no longer listed"
                    self._collect(t.runs, waiting)
                    missing = [r for r in t.runs if id(r) in waiting]
                    if missing and now - t.ended_at < s.opts.grace_s:
                        continue
                    t.done = True
                    if not missing:
                        continue
                    if self.stop_reason:
                        for r in missing:
                            r.status, r.message = "skipped", f"not run: {self.stop_reason}"
                            self._done(r, waiting)
                    elif t.attempt == 1:
                        lost.append((t, missing))
                    else:
                        for r in missing:
                            r.status, r.key = "error", LOST_KEY
                            r.message = (f"{LOST_KEY} (array tasks {r.extra.get('lost_in', '?')}, "
                                         f"then {t.name} ({t.state}))")
                            self._done(r, waiting)
                        s.lost_twice += len(missing)
                        print(f"regress: Slurm task {t.name} ended ({t.state}) without results for "
                              f"{_n(len(missing), 'resubmitted run')}; they are errors", flush=True)
                if lost:
                    tasks += self._resubmit(lost, stop_file)
                time.sleep(s.opts.poll_s)
        except BaseException:
            pending = sorted({t.job for t in tasks if not t.done})
            s.cli.cancel(pending)
            if pending:
                print(f"regress: cancelled Slurm job{'s' if len(pending) > 1 else ''} "
                      f"{', '.join(pending)}", flush=True)
            self._collect(runs, waiting)
            raise
        return runs

    def _collect(self, runs, waiting):
        """Takes the results that appeared (one directory listing per log directory)."""
        present = {}
        for r in runs:
            if id(r) not in waiting:
                continue
            d = os.path.dirname(r.log)
            if d not in present:
                try:
                    present[d] = set(os.listdir(d))
                except OSError:
                    present[d] = set()
            if os.path.basename(result_path(r.log)) in present[d] and read_result(r):
                self._done(r, waiting)

    def _done(self, r, waiting):
        waiting.discard(id(r))
        if r.failed and self.fail_fast and not self.stop_reason:
            self.stop_reason = FAIL_FAST_REASON
        if self.on_done:
            self.on_done(r)

    def _check_stop(self, t0, tasks, stop_file):
        if (not self.stop_reason and self.budget_s is not None
                and time.monotonic() - t0 > self.budget_s):
            self.stop_reason = f"budget of {self.budget_s / 60:g} min spent"
        if self.stop_reason and not self._stop_sent:
            self._stop_sent = True
            if not os.path.exists(stop_file):
                atomic_write_json(stop_file, {"reason": self.stop_reason})
            self.s.cli.cancel(sorted({t.job for t in tasks if not t.done}), pending_only=True)

    def _resubmit(self, lost, stop_file):
        runs = [r for _, rs in lost for r in rs]
        for t, rs in lost:
            for r in rs:
                r.extra["lost_in"] = f"{t.name} ({t.state})"
            print(f"regress: Slurm task {t.name} ended ({t.state}) without results for "
                  f"{len(rs)} of its {_n(len(t.runs), 'run')}; resubmitting them (same seeds)", flush=True)
        new = self.s.submit(runs, 2, stop_file, self.fail_fast)
        names = ", ".join(t.name for t in new)
        for t, rs in lost:
            self.s.resubmitted.append({"task": t.name, "state": t.state, "runs": len(rs), "as": names})
        return new


# -------------------------------------------------------------------------------- task side

def task_main(argv):
    """One array task: runs shard $SLURM_ARRAY_TASK_ID of the manifest, one run after another;
    each run writes its own result file. SIGTERM (time limit, scancel) kills the run in progress
    and ends the task without writing its result."""
    if len(argv) != 2:
        print("usage: python3 -m regresslib.slurm MANIFEST (in a Slurm array task)", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        m = json.load(f)
    index = int(os.environ.get("SLURM_ARRAY_TASK_ID", "0"))
    job = os.environ.get("SLURM_ARRAY_JOB_ID", "local")
    runs = [Run.from_spec(d) for d in m["shards"][index]]
    registry, lock = {}, threading.Lock()

    def term(signum, frame):
        for _, p in list(registry.values()):
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, term)
    signal.signal(signal.SIGINT, term)
    atomic_write_json(os.path.join(m["tasks_dir"], f"{job}_{index}.json"),
                      {"pid": os.getpid(), "host": socket.gethostname(), "attempt": m["attempt"],
                       "runs": [r.name for r in runs]})
    print(f"task {job}_{index} on {socket.gethostname()}: {len(runs)} runs", flush=True)
    for r in runs:
        if os.path.exists(m["stop_file"]):
            with open(m["stop_file"]) as f:
                reason = json.load(f)["reason"]
            r.status, r.message = "skipped", f"not run: {reason}"
            write_result(r)
        else:
            execute(r, registry, lock, die_with_parent=True)
            if r.failed and m["fail_fast"] and not os.path.exists(m["stop_file"]):
                atomic_write_json(m["stop_file"], {"reason": FAIL_FAST_REASON})
        print(f"{r.name}: {r.status} ({r.duration:.1f} s) {r.message}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(task_main(sys.argv))
