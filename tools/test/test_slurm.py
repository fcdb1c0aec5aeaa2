"""The Slurm backend without Slurm (regresslib.slurm): sharding, squeue parsing, result files
written atomically and collected, the resubmission of runs whose task ended without results
(once; a second loss is an error; a test failure never), stop and interrupt, and whole
regressions through tools/regress with a stand-in scheduler that runs the array tasks' real
batch scripts as local processes (the same per-run results and reports as the local backend).
tools/slurm_selftest does the same against a real Slurm."""
import contextlib
import io
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest
from unittest import mock

import common
from regresslib import regress, runner, slurm
from regresslib.runner import Run, derive_seed
from regresslib.slurm import SlurmOptions, SlurmSession


class FakeCli:
    """Stands in for sbatch/squeue/scancel: every array task is its batch script run as a local
    process, at most `slots` at once. kill = {(submission number, task index)}: that task's
    process gets SIGKILL as it starts (a lost task); kill_after_first: once its first run has a
    result. An ended task is listed once as COMPLETED/FAILED/CANCELLED,
    then no more (as when Slurm purges it)."""

    def __init__(self, slots=2, kill=(), kill_after_first=()):
        self.slots = slots
        self.kill = set(kill)
        self.kill_after_first = set(kill_after_first)
        self.subs = []           # (job, script, [task dicts])
        self.cancelled = []
        self.last_error = ""
        self.polls = 0

    def submit(self, script, ntasks, opts, minutes, output, name):
        job = str(100 + len(self.subs))
        self.subs.append((job, script, [{"i": i, "p": None, "state": "PENDING", "shown": False,
                                         "out": output.replace("%A", job).replace("%a", str(i))}
                                        for i in range(ntasks)]))
        self.minutes = minutes
        return job

    def _tasks(self):
        for n, (job, script, tasks) in enumerate(self.subs, start=1):
            for t in tasks:
                yield n, job, script, t

    def states(self, jobs):
        self.polls += 1
        running = 0
        for n, job, script, t in self._tasks():
            p = t["p"]
            if t["state"] == "RUNNING":
                if p.poll() is not None:
                    t["state"] = "COMPLETED" if p.returncode == 0 else "FAILED"
                    t["log"].close()
                else:
                    running += 1
                    self._maybe_kill(n, job, t)
        for n, job, script, t in self._tasks():
            if t["state"] == "PENDING" and running < self.slots:
                env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(t["i"]), SLURM_ARRAY_JOB_ID=job)
                t["log"] = open(t["out"], "w")
                t["p"] = subprocess.Popen(["/bin/sh", script], env=env, stdout=t["log"],
                                          stderr=subprocess.STDOUT)
                t["state"] = "RUNNING"
                running += 1
                if (n, t["i"]) in self.kill:
                    t["p"].kill()
        out = {}
        for n, job, script, t in self._tasks():
            if job not in jobs:
                continue
            if t["state"] in ("PENDING", "RUNNING"):
                out[(job, t["i"])] = t["state"]
            elif not t["shown"]:
                t["shown"] = True
                out[(job, t["i"])] = t["state"]
        return out

    def _maybe_kill(self, n, job, t):
        key = (n, t["i"])
        tasks_dir = os.path.join(os.path.dirname(self.subs[0][1]), "tasks")
        tfile = os.path.join(tasks_dir, f"{job}_{t['i']}.json")
        if key in self.kill_after_first and os.path.exists(tfile):
            with open(tfile) as f:
                first = json.load(f)["runs"][0]
            logs = os.path.join(os.path.dirname(os.path.dirname(tasks_dir)), "logs")
            if os.path.exists(os.path.join(logs, f"{first}.result.json")):
                self.kill_after_first.discard(key)
                os.kill(t["p"].pid, signal.SIGKILL)

    def cancel(self, jobs, pending_only=False):
        self.cancelled.append((list(jobs), pending_only))
        for n, job, script, t in self._tasks():
            if job in jobs and t["state"] == "PENDING":
                t["state"] = "CANCELLED"
            elif job in jobs and t["state"] == "RUNNING" and not pending_only:
                t["p"].send_signal(signal.SIGTERM)

    def wait(self):
        for n, job, script, t in self._tasks():
            if t["p"] is not None:
                t["p"].wait(timeout=30)
                if not t["log"].closed:
                    t["log"].close()


def fake_runs(d, specs):
    """Run records of the stand-in program: specs = [(test, seed), ...]."""
    return [Run(i, t, s, "fast", common.FAKE, [], 10.0, os.path.join(d, "logs", f"{t}-{s}.log"))
            for i, (t, s) in enumerate(specs)]


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def session(d, cli, **kw):
    return SlurmSession(SlurmOptions(poll_s=0.05, grace_s=0.3, **kw), d, cli=cli)


class Sharding(unittest.TestCase):
    def test_round_robin_and_bound(self):
        runs = list(range(19))
        shards = slurm.shard(runs, 8)
        self.assertEqual(len(shards), 3)
        self.assertEqual(shards[0], [0, 3, 6, 9, 12, 15, 18])
        self.assertEqual(sorted(sum(shards, [])), runs)
        self.assertTrue(all(len(s) <= 8 for s in shards))
        self.assertEqual(slurm.shard(runs, 100), [runs])
        self.assertEqual(slurm.shard([1, 2, 3], 1), [[1], [2], [3]])
        self.assertEqual(slurm.shard([], 8), [])

    def test_time_limit(self):
        with tempfile.TemporaryDirectory() as d:
            runs = fake_runs(d, [("good", s) for s in range(3)])
            for r, t in zip(runs, (300, 300, 610)):
                r.timeout = t
            self.assertEqual(slurm.task_minutes(runs, SlurmOptions()), 21 + slurm.TIME_MARGIN_MIN)
            self.assertEqual(slurm.task_minutes(runs, SlurmOptions(time_limit=7)), 7)


class Squeue(unittest.TestCase):
    def test_parse(self):
        text = ("12_3 RUNNING\n12_[4-6,9%2] PENDING\n12_0 COMPLETED\n13_1 RUNNING\n"
                "77 RUNNING\n\ngarbage\n12_x FAILED\n")
        st = slurm.parse_squeue(text, {"12"})
        self.assertEqual(st, {("12", 3): "RUNNING", ("12", 4): "PENDING", ("12", 5): "PENDING",
                              ("12", 6): "PENDING", ("12", 9): "PENDING", ("12", 0): "COMPLETED"})
        self.assertEqual(slurm.parse_squeue(text, {"13", "77"}), {("13", 1): "RUNNING"})

    def test_states_that_have_not_ended(self):
        for s in ("PENDING", "RUNNING", "COMPLETING", "SUSPENDED"):
            self.assertIn(s, slurm.ACTIVE_STATES)
        for s in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                  "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE"):
            self.assertNotIn(s, slurm.ACTIVE_STATES)


class ResultFiles(unittest.TestCase):
    def test_atomic_write_and_read(self):
        with tempfile.TemporaryDirectory() as d:
            r = fake_runs(d, [("flaky", 9)])[0]
            self.assertEqual(runner.result_path(r.log), os.path.join(d, "logs", "flaky-9.result.json"))
            runner.execute(r)
            self.assertEqual(sorted(os.listdir(os.path.join(d, "logs"))),
                             ["flaky-9.log", "flaky-9.result.json"])      # no temporary left over
            back = fake_runs(d, [("flaky", 9)])[0]
            self.assertTrue(runner.read_result(back))
            for k in runner.RESULT_FIELDS:
                self.assertEqual(getattr(back, k), getattr(r, k), k)
            self.assertEqual(back.status, "fail")
            # a result of another run at that path, or a half-written file, is no result
            other = fake_runs(d, [("flaky", 9)])[0]
            other.seed = 10
            other.log = r.log
            self.assertFalse(runner.read_result(other))
            with open(runner.result_path(r.log), "w") as f:
                f.write('{"test": "flaky", "se')
            self.assertFalse(runner.read_result(back))
            runner.clear_result(back)
            self.assertFalse(os.path.exists(runner.result_path(r.log)))
            runner.clear_result(back)            # nothing there: no error

    def test_interrupted_run_writes_no_result(self):
        with tempfile.TemporaryDirectory() as d:
            r = fake_runs(d, [("good", 1)])[0]
            r.extra["interrupted"] = True
            runner.execute(r)
            self.assertEqual(r.status, "skipped")
            self.assertFalse(os.path.exists(runner.result_path(r.log)))

    def test_spec_round_trip(self):
        r = Run(3, "t", 5, "coverage", "/p", ["+a=1"], 7.0, "/l/t-5.log", "/c/t-5.dat")
        self.assertEqual(Run.from_spec(json.loads(json.dumps(r.spec()))).spec(), r.spec())


class Executor(unittest.TestCase):
    SPECS = [("good", 1), ("flaky", 3), ("good", 2), ("flaky", 4), ("good", 5), ("fatal", 6)]

    def run_fake(self, d, cli, specs=None, **kw):
        runs = fake_runs(d, specs or self.SPECS)
        done = []
        s = session(d, cli, runs_per_task=2)
        ex = s.executor(on_done=done.append, **kw)
        try:
            ex.run_all(runs)
        finally:
            cli.wait()
        return s, ex, runs, done

    def test_all_tasks_complete(self):
        with tempfile.TemporaryDirectory() as d:
            cli = FakeCli()
            s, ex, runs, done = self.run_fake(d, cli)
            self.assertEqual([r.status for r in runs], ["pass", "fail", "pass", "pass", "pass", "fail"])
            self.assertEqual(len(done), 6)
            self.assertEqual(len(cli.subs), 1)          # failures are never resubmitted
            self.assertEqual(len(cli.subs[0][2]), 3)
            self.assertEqual(s.info()["resubmitted"], [])
            # the local executor gives the same verdicts
            local = fake_runs(os.path.join(d, "local"), self.SPECS)
            runner.Executor(2).run_all(local)
            self.assertEqual([(r.status, r.key) for r in local], [(r.status, r.key) for r in runs])
            with open(os.path.join(d, "slurm", "submit1.json")) as f:
                m = json.load(f)
            self.assertEqual([[x["seed"] for x in sh] for sh in m["shards"]], [[1, 4], [3, 5], [2, 6]])

    def test_lost_task_is_resubmitted_once_with_its_seeds(self):
        with tempfile.TemporaryDirectory() as d:
            cli = FakeCli(kill={(1, 1)})
            s, ex, runs, done = self.run_fake(d, cli)
            self.assertEqual([r.status for r in runs], ["pass", "fail", "pass", "pass", "pass", "fail"])
            self.assertEqual(len(cli.subs), 2)
            with open(os.path.join(d, "slurm", "submit2.json")) as f:
                m = json.load(f)
            self.assertEqual(m["attempt"], 2)
            self.assertEqual([[(x["test"], x["seed"]) for x in sh] for sh in m["shards"]],
                             [[("flaky", 3), ("good", 5)]])
            self.assertEqual(s.info()["resubmitted"],
                             [{"task": "100_1", "state": "FAILED", "runs": 2, "as": "101_0"}])
            self.assertEqual(len(done), 6)

    def test_only_the_runs_without_results_are_resubmitted(self):
        with tempfile.TemporaryDirectory() as d:
            # task 1 = good-2, slow-4: killed while slow-4 runs
            cli = FakeCli(kill_after_first={(1, 1)})
            runs = fake_runs(d, [("good", 1), ("good", 2), ("good", 3), ("slow", 4)])
            s = session(d, cli, runs_per_task=2)
            try:
                s.executor().run_all(runs)
            finally:
                cli.wait()
            self.assertEqual([r.status for r in runs], ["pass"] * 4)
            with open(os.path.join(d, "slurm", "submit2.json")) as f:
                m = json.load(f)
            self.assertEqual([[x["seed"] for x in sh] for sh in m["shards"]], [[4]])
            self.assertEqual(s.info()["resubmitted"],
                             [{"task": "100_1", "state": "FAILED", "runs": 1, "as": "101_0"}])

    def test_lost_twice_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            cli = FakeCli(kill={(1, 2), (2, 0)})
            s, ex, runs, done = self.run_fake(d, cli)
            st = {(r.test, r.seed): r for r in runs}
            for k in (("good", 2), ("fatal", 6)):
                self.assertEqual(st[k].status, "error")
                self.assertEqual(st[k].key, slurm.LOST_KEY)
                self.assertIn("array tasks 100_2 (FAILED), then 101_0 (FAILED)", st[k].message)
            self.assertEqual(st[("flaky", 4)].status, "pass")
            self.assertEqual(len(cli.subs), 2)                  # no third attempt
            self.assertEqual(s.info()["lost_twice"], 2)

    def test_fail_fast_stops_the_tasks(self):
        with tempfile.TemporaryDirectory() as d:
            cli = FakeCli(slots=1)
            specs = [("fatal", 1), ("good", 2), ("good", 3), ("good", 4)]
            s, ex, runs, done = self.run_fake(d, cli, specs=specs, fail_fast=True)
            self.assertEqual(runs[0].status, "fail")
            self.assertEqual(ex.stop_reason, "stopped after the first failure (--fail-fast)")
            # task 0 ran fatal-1 and wrote the stop file; task 1 was cancelled while pending
            self.assertEqual([r.status for r in runs[1:]], ["skipped"] * 3)
            self.assertTrue(all("first failure" in r.message for r in runs[1:]))
            self.assertIn((["100"], True), cli.cancelled)
            self.assertEqual(len(cli.subs), 1)

    def test_interrupt_cancels_the_array(self):
        with tempfile.TemporaryDirectory() as d:
            cli = FakeCli(slots=1)
            runs = fake_runs(d, [("good", 1), ("slow", 2), ("good", 3)])

            def on_done(r):
                raise KeyboardInterrupt
            ex = session(d, cli, runs_per_task=1).executor(on_done=on_done)
            with self.assertRaises(KeyboardInterrupt):
                ex.run_all(runs)
            cli.wait()
            self.assertEqual(cli.cancelled[-1], (["100"], False))

    def test_task_time_limit_ends_the_run_without_a_result(self):
        # SIGTERM to the task (what Slurm sends at the time limit and on scancel) kills the run
        # in progress and its children; the run has no result file, so it is resubmitted
        with tempfile.TemporaryDirectory() as d:
            s = session(d, FakeCli())
            runs = fake_runs(d, [("hang", 1)])
            s.submit(runs, 1, os.path.join(d, "stop"))
            env = dict(os.environ, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_JOB_ID="9")
            p = subprocess.Popen(["/bin/sh", os.path.join(d, "slurm", "submit1.sh")], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
            for _ in range(100):
                if "child pid" in read(runs[0].log):
                    break
                time.sleep(0.1)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(timeout=10), 128 + signal.SIGTERM)
            self.assertFalse(os.path.exists(runner.result_path(runs[0].log)))
            child = int(read(runs[0].log).split("child pid ")[1].split()[0])
            for _ in range(50):
                if not os.path.exists(f"/proc/{child}"):
                    break
                time.sleep(0.1)
            with contextlib.suppress(FileNotFoundError), open(f"/proc/{child}/stat") as f:
                self.assertEqual(f.read().split(")")[-1].split()[0], "Z")


class ThroughTheCli(unittest.TestCase):
    """tools/regress --backend slurm in-process, with FakeCli as the scheduler."""

    def regress(self, argv, cli=None):
        out = io.StringIO()
        with mock.patch.object(slurm, "SlurmCli", lambda: cli), \
                mock.patch.object(regress.shutil, "which", lambda c: "/bin/" + c), \
                mock.patch.object(slurm.SlurmOptions, "__init__", _fast_opts), \
                contextlib.redirect_stdout(out):
            rc = regress.main(argv)
        if cli:
            cli.wait()
        return rc, out.getvalue()

    def test_same_results_and_reports_as_local(self):
        with tempfile.TemporaryDirectory() as d:
            common_args = ["--tests", "good,flaky,fatal", "--seeds", "4", "--seed", "77", "--no-build",
                           "--program", common.FAKE, "--testplan", os.path.join(d, "none")]
            rc_l, out_l = self.regress(common_args + ["--out", os.path.join(d, "local")])
            cli = FakeCli(kill={(1, 1)})
            rc_s, out_s = self.regress(common_args + ["--out", os.path.join(d, "slurm"), "--backend", "slurm",
                                                      "--runs-per-task", "3"], cli)
            self.assertEqual((rc_l, rc_s), (1, 1))
            self.assertEqual(out_l.splitlines()[-1], out_s.splitlines()[-1])
            self.assertIn("resubmitting them (same seeds)", out_s)
            res = {}
            for k in ("local", "slurm"):
                with open(os.path.join(d, k, "results.json")) as f:
                    res[k] = json.load(f)
            pick = ("test", "seed", "status", "key", "message", "reproduce")
            self.assertEqual([{x: r[x] for x in pick} for r in res["local"]["runs"]],
                             [{x: r[x] for x in pick} for r in res["slurm"]["runs"]])
            self.assertEqual([r["seed"] for r in res["slurm"]["runs"][:4]],
                             [derive_seed(77, "good", k) for k in range(4)])
            for k in ("buckets", "tests", "counts"):
                strip = json.loads(json.dumps(res["slurm"][k]).replace("/slurm/", "/local/"))
                self.assertEqual(strip, json.loads(json.dumps(res["local"][k])), k)
            b = res["slurm"]["backend"]
            self.assertEqual((b["name"], b["jobs"], b["tasks"], len(b["resubmitted"])), ("slurm", ["100", "101", "102"], 6, 1))
            self.assertEqual(res["local"]["backend"], {"name": "local", "jobs": 2})
            # the debug reruns went through the scheduler too: one array job of its own
            self.assertEqual(len(cli.subs), 3)
            with open(os.path.join(d, "slurm", "report.md")) as f:
                md = f.read()
            self.assertIn("on Slurm (jobs 100, 101, 102; 6 array tasks of at most 3 runs; ", md)
            self.assertIn("1 task ended without results and 3 runs resubmitted", md)

    def test_usage_errors(self):
        for argv, frag in ((["--partition", "x"], "--partition needs --backend slurm"),
                           (["--runs-per-task", "3"], "--runs-per-task needs --backend slurm"),
                           (["--backend", "slurm", "--jobs", "3"], "--jobs is for the local backend"),
                           (["--history", "h", "--no-history"], "exclude each other")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = regress.main(["--tests", "good", "--no-build", "--program", common.FAKE] + argv)
            self.assertEqual(rc, 2, argv)
            self.assertIn(frag, err.getvalue(), argv)
            self.assertEqual(len(err.getvalue().strip().splitlines()), 1)
        err = io.StringIO()
        with mock.patch.object(regress.shutil, "which", lambda c: None), contextlib.redirect_stderr(err):
            rc = regress.main(["--tests", "good", "--backend", "slurm"])
        self.assertEqual(rc, 2)
        self.assertIn("sbatch not found", err.getvalue())


_real_init = SlurmOptions.__init__


def _fast_opts(self, *a, **kw):
    _real_init(self, *a, **kw)
    self.poll_s, self.grace_s = 0.05, 0.3


if __name__ == "__main__":
    unittest.main()
