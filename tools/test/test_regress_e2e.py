"""tools/regress end to end: against the real UVM-lite example program (build/verif/uvm/
uvm_example, or $SRNIC_UVM_EXAMPLE) and against fixtures/fake_uvm.py, a program that follows the
same contract and fails on chosen seeds, crashes, hangs, or writes coverage files."""
import contextlib
import datetime
import json
import os
import shutil
import signal
import subprocess
import time
import sys
import tempfile
import threading
import unittest
import xml.etree.ElementTree as ET

import common
from regresslib import ToolError, outdir, regress
from regresslib.runner import derive_seed

TOOL = os.path.join(common.TOOLS, "regress")
EXAMPLE = os.environ.get("SRNIC_UVM_EXAMPLE") or os.path.join(common.ROOT, "build", "verif", "uvm", "uvm_example")


def regress_cmd(*args, timeout=120):
    p = subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def results(out):
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


@unittest.skipUnless(os.access(EXAMPLE, os.X_OK), f"{EXAMPLE} not built (cmake --build build --target uvm_example)")
class UvmExample(unittest.TestCase):
    def test_three_seeds_pass(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = regress_cmd("--tests", "example", "--seeds", "3", "--seed", "5", "--no-build",
                                       "--program", EXAMPLE, "--out", d, "--testplan", os.path.join(d, "none"))
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(out.splitlines()[-1], "3 passed, 0 failed")
            self.assertIn("master seed 5", out)
            res = results(d)
            seeds = [derive_seed(5, "example", i) for i in range(3)]
            self.assertEqual([r["seed"] for r in res["runs"]], seeds)
            for s in seeds:
                with open(os.path.join(d, "logs", f"example-{s}.log")) as f:
                    text = f.read()
                self.assertTrue(text.startswith(f"SEED {s}"))
                self.assertIn("TEST PASSED", text)
            root = ET.parse(os.path.join(d, "junit.xml")).getroot()
            self.assertEqual((root.get("tests"), root.get("failures"), root.get("errors")), ("3", "0", "0"))
            self.assertEqual([c.get("name") for c in root.iter("testcase")], ["example#1", "example#2", "example#3"])
            with open(os.path.join(d, "report.md")) as f:
                self.assertIn("| result | PASSED |", f.read())

    def test_unregistered_test_and_seed_list(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, _ = regress_cmd("--tests", "example,nosuch", "--seed-list", "1,2", "--no-build",
                                     "--program", EXAMPLE, "--out", d, "--no-rerun")
            self.assertEqual(rc, 1)
            self.assertEqual(out.splitlines()[-1], "2 passed, 2 failed")
            self.assertIn("RUNNER [NOT_REGISTERED] test nosuch is not registered", out)
            self.assertTrue(os.path.exists(os.path.join(d, "logs", "example-2.log")))

    def test_testplan_only(self):
        rc, out, _ = regress_cmd("--testplan-only", "--program", EXAMPLE)
        self.assertEqual(rc, 0)
        self.assertIn("1 tests registered", out)
        self.assertRegex(out, r"smoke_traffic\s+V1\s+NO\s+-")


class FakeProgram(unittest.TestCase):
    def test_bucketing_and_counts(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = regress_cmd("--tests", "good,flaky", "--seed-list", "3,4,6,9,10", "--no-build",
                                       "--program", common.FAKE, "--out", d, "--no-rerun", "--jobs", "3")
            self.assertEqual(rc, 1, out + err)
            self.assertEqual(out.splitlines()[-1], "7 passed, 3 failed")
            res = results(d)
            self.assertEqual(len(res["buckets"]), 1)
            b = res["buckets"][0]
            self.assertEqual(b["count"], 3)
            self.assertEqual(b["key"], "ERROR env.host#.sb [SB_MISMATCH] byte # at # differs: got #, want #")
            self.assertEqual([f["seed"] for f in b["failures"]], [3, 6, 9])
            fake = os.path.relpath(common.FAKE, common.ROOT)
            for s in (3, 6, 9):
                self.assertIn(f"  {fake} --test flaky --seed {s}\n", out)
            self.assertEqual(res["tests"], [
                {"test": "good", "runs": 5, "passed": 5, "failed": 0, "skipped": 0},
                {"test": "flaky", "runs": 5, "passed": 2, "failed": 3, "skipped": 0}])
            root = ET.parse(os.path.join(d, "junit.xml")).getroot()
            self.assertEqual((root.get("tests"), root.get("failures")), ("10", "3"))
            cases = {c.get("name"): c for c in root.iter("testcase")}
            self.assertEqual(sorted(cases), sorted([f"good#{k}" for k in range(1, 6)] +
                                                   [f"flaky#{k}" for k in range(1, 6)]))
            self.assertIsNotNone(cases["flaky#1"].find("failure"))      # seed 3
            self.assertIsNone(cases["flaky#2"].find("failure"))         # seed 4

    def test_every_failure_kind_reruns_and_coverage(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = regress_cmd("--tests", "good,flaky,fatal,crash,hang,silent_fail,noseed",
                                       "--seed-list", "4,6", "--timeout", "1", "--build", "coverage",
                                       "--no-build", "--program", common.FAKE, "--out", d, "--jobs", "2")
            self.assertEqual(rc, 1, out + err)
            self.assertEqual(out.splitlines()[-1], "3 passed, 11 failed")
            res = results(d)
            c = res["counts"]
            self.assertEqual((c["fail"], c["crash"], c["timeout"]), (7, 2, 2))
            keys = {b["key"]: b for b in res["buckets"]}
            self.assertEqual(len(keys), 6)
            for k in ("FATAL env.cfg [CFG] bad MTU # for qp #", "RUNNER [CRASH] killed by SIGSEGV",
                      "RUNNER [TIMEOUT] no end within the timeout",
                      "RUNNER [NO_SEED] output does not start with 'SEED #'"):
                self.assertIn(k, keys)
            # one debug rerun per bucket, with waves, reproducing the same bucket
            for b in res["buckets"]:
                rr = b["rerun"]
                self.assertEqual((rr["test"], rr["seed"]), (b["failures"][0]["test"], b["failures"][0]["seed"]))
                self.assertEqual(rr["outcome"], "failed again, same bucket")
                self.assertTrue(os.path.exists(os.path.join(d, "waves", f"{rr['test']}-{rr['seed']}.fst")))
            self.assertIn("+cov_out=", res["runs"][0]["reproduce"])
            cov = res["coverage"]
            if shutil.which("verilator_coverage"):
                self.assertEqual(cov["inputs"], 14)
                self.assertEqual(cov["line"]["files"], [{"file": "rtl/fake_cov.sv", "hit": 4, "total": 4}])
                g = cov["functional"]["groups"]
                self.assertEqual([(x["name"], x["hit"], x["total"], x["missed"]) for x in g],
                                 [("cg_fake", 2, 4, ["op:b1", "op:b3"])])
                self.assertIn("functional coverage: 50.0% (2/4)", out)

    def test_regression_file_and_testplan(self):
        with tempfile.TemporaryDirectory() as d:
            regs = os.path.join(d, "r.toml")
            with open(regs, "w") as f:
                f.write('[mini]\ndesc = "x"\ntimeout = 20\nruns = [\n'
                        '  { test = "flaky", seeds = [3, 4] },\n'
                        '  { test = "good", seeds = 2, args = ["+foo=1"] },\n'
                        '  { test = "good", seeds = 1 },\n]\n')
            tp = os.path.join(d, "tp.toml")
            with open(tp, "w") as f:
                for name, tests in (("p_flaky", '["flaky"]'), ("p_good", '["good"]'), ("p_missing", '["nope"]')):
                    f.write(f'[[testpoint]]\nname = "{name}"\nstage = "V2"\ndesc = "d"\ntests = {tests}\n')
            out_dir = os.path.join(d, "out")
            rc, out, err = regress_cmd("--regression", "mini", "--regressions-file", regs, "--testplan", tp,
                                       "--seed", "1", "--no-build", "--program", common.FAKE,
                                       "--out", out_dir, "--no-rerun")
            self.assertEqual(rc, 1, out + err)
            self.assertEqual(out.splitlines()[-1], "4 passed, 1 failed")
            res = results(out_dir)
            # derived seeds continue across entries of one test
            self.assertEqual([r["seed"] for r in res["runs"]],
                             [3, 4] + [derive_seed(1, "good", k) for k in range(3)])
            self.assertTrue(res["runs"][2]["reproduce"].endswith("+foo=1"))
            st = {t["name"]: t for t in res["testplan"]}
            self.assertEqual((st["p_flaky"]["written"], st["p_flaky"]["passing"]), (True, False))
            self.assertEqual((st["p_good"]["written"], st["p_good"]["passing"]), (True, True))
            self.assertEqual((st["p_missing"]["written"], st["p_missing"]["passing"]), (False, False))
            with open(os.path.join(out_dir, "report.html")) as f:
                self.assertIn("p_missing", f.read())
            # --tests narrows a regression; unknown names are refused
            rc, out, _ = regress_cmd("--regression", "mini", "--regressions-file", regs, "--tests", "good",
                                     "--no-build", "--program", common.FAKE, "--out", out_dir + "2")
            self.assertEqual((rc, out.splitlines()[-1]), (0, "3 passed, 0 failed"))
            rc, _, err = regress_cmd("--regression", "mini", "--regressions-file", regs, "--tests", "cr_x",
                                     "--no-build", "--program", common.FAKE)
            self.assertEqual(rc, 2)
            self.assertIn("test 'cr_x' is not in regression 'mini'", err)

    def test_interrupt_kills_runs_and_reports(self):
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.Popen([sys.executable, TOOL, "--tests", "hang,good", "--seed-list", "1,2",
                                  "--timeout", "100", "--no-build", "--program", common.FAKE, "--out", d,
                                  "--no-rerun", "--jobs", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            log = os.path.join(d, "logs", "hang-1.log")
            for _ in range(100):        # until the first run is up
                if os.path.exists(log) and os.path.getsize(log):
                    break
                time.sleep(0.1)
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 130, out)
            self.assertEqual(out.splitlines()[-1], "0 passed, 0 failed")
            self.assertEqual({r["status"] for r in results(d)["runs"]}, {"skipped"})

    def test_resume_keeps_finished_runs_and_runs_the_rest(self):
        plan = ["--tests", "slow,good", "--seed-list", "1,2,3", "--no-build", "--program", common.FAKE,
                "--jobs", "1", "--no-rerun", "--seed", "7"]
        env = dict(os.environ, SRNIC_REGRESS_GIT_REV="abc1234")

        def call(*extra, rev="abc1234"):
            p = subprocess.run([sys.executable, TOOL] + plan + list(extra), capture_output=True, text=True,
                               timeout=120, env=dict(env, SRNIC_REGRESS_GIT_REV=rev))
            return p.returncode, p.stdout, p.stderr

        with tempfile.TemporaryDirectory() as d:
            rc, out, err = call("--out", d, "--budget", "0.04")   # 2.4 s: two 2-second runs start
            self.assertEqual(rc, 0, out + err)
            first = results(d)
            ran = [r for r in first["runs"] if r["status"] == "pass"]
            self.assertEqual([(r["test"], r["seed"]) for r in ran], [("slow", 1), ("slow", 2)], out)
            self.assertEqual(first["counts"]["skipped"], 4)
            self.assertEqual(first["git_rev"], "abc1234")
            kept_log = os.path.join(d, "logs", "slow-1.log")
            mtime = os.stat(kept_log).st_mtime_ns
            # refused: another commit, a modified tree, another plan, no earlier part
            rc, _, err = call("--out", d, "--resume", rev="def5678")
            self.assertEqual(rc, 2)
            self.assertIn("the earlier part ran on abc1234, this tree is def5678", err)
            rc, _, err = call("--out", d, "--resume", rev="abc1234-dirty")
            self.assertEqual(rc, 2)
            self.assertIn("needs a clean tree", err)
            rc, _, err = call("--out", d, "--resume", "--seed-list", "1,2")
            self.assertEqual(rc, 2)
            self.assertIn("planned runs differ", err)
            with tempfile.TemporaryDirectory() as e:
                rc, _, err = call("--out", e, "--resume")
                self.assertEqual(rc, 2)
                self.assertIn("no results.json of an earlier part", err)
            rc, out, err = call("--out", d, "--resume")
            self.assertEqual(rc, 0, out + err)
            self.assertIn("resuming: 2 finished in 1 earlier part(s) kept, 4 to run", out)
            self.assertEqual(out.splitlines()[-1], "6 passed, 0 failed")
            self.assertEqual(os.stat(kept_log).st_mtime_ns, mtime, "a finished run was run again")
            res = results(d)
            self.assertEqual(res["counts"]["passed"], 6)
            self.assertEqual(len(res["parts"]), 2)
            self.assertEqual(res["parts"][1]["ran"], 4)
            self.assertEqual(res["started"], first["started"])
            self.assertGreaterEqual(res["wall_s"], first["wall_s"] + 2.0)
            with open(os.path.join(d, "report.md")) as f:
                rep = f.read()
            self.assertIn("| commit | `abc1234` |", rep)
            self.assertIn("| parts |", rep)

    @unittest.skipUnless(shutil.which("verilator_coverage"), "verilator_coverage not installed")
    def test_carry_to_another_directory_gives_the_coverage_of_one_run(self):
        plan = ["--tests", "slow,good", "--seed-list", "1,2,3", "--no-build", "--program", common.FAKE,
                "--jobs", "1", "--no-rerun", "--seed", "7", "--build", "coverage"]
        env = dict(os.environ, SRNIC_REGRESS_GIT_REV="abc1234")

        def call(*extra):
            p = subprocess.run([sys.executable, TOOL] + plan + list(extra), capture_output=True, text=True,
                               timeout=120, env=env)
            return p.returncode, p.stdout, p.stderr

        with tempfile.TemporaryDirectory() as d:
            one, a, b = (os.path.join(d, x) for x in ("one", "a", "b"))
            archive = os.path.join(d, "carry.tar.xz")
            rc, out, err = call("--out", one)                      # the whole regression at once
            self.assertEqual(rc, 0, out + err)
            rc, out, err = call("--out", a, "--budget", "0.04")    # two slow runs, then stop
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(results(a)["counts"]["passed"], 2)
            rc, out, err = call("--out", a, "--pack", archive)
            self.assertEqual(rc, 0, out + err)
            self.assertIn("packed 2 finished of 6 runs, coverage of 2 runs", out)
            # refused: --unpack without --resume, into a directory that holds a regression
            rc, _, err = call("--out", b, "--unpack", archive)
            self.assertEqual(rc, 2)
            self.assertIn("--unpack needs --resume", err)
            rc, _, err = call("--out", a, "--resume", "--unpack", archive)
            self.assertEqual(rc, 2)
            self.assertIn("already holds a regression", err)
            rc, out, err = call("--out", b, "--resume", "--unpack", archive)
            self.assertEqual(rc, 0, out + err)
            self.assertIn("resuming: 2 finished in 1 earlier part(s) kept, 4 to run", out)
            self.assertIn("and the carried coverage of 2 runs", out)
            whole, parts = results(one)["coverage"], results(b)["coverage"]
            for k in ("line", "toggle", "functional"):
                self.assertEqual((parts[k]["hit"], parts[k]["total"]), (whole[k]["hit"], whole[k]["total"]), k)
            # sig0 (seed 2), sig1 (seed 3), sig3 (slow seed 1: in the carried part only)
            self.assertEqual((whole["toggle"]["hit"], whole["toggle"]["total"]), (3, 4))
            self.assertIn("(6 runs)", parts["toggle"]["basis"])
            self.assertEqual(whole["functional"]["groups"][0]["bins"], parts["functional"]["groups"][0]["bins"])
            self.assertEqual(results(b)["counts"]["passed"], 6)
            self.assertNotIn("wrote no coverage file", " ".join(parts["notes"]))

    def test_usage_errors(self):
        for args, frag in ((["--no-build", "--regressions-file", "/nonexistent/r.toml"], "file not found"),
                           (["--regression", "nope"], "unknown regression 'nope'"),
                           (["--tests", "a", "--seeds", "2", "--seed-list", "1"], "exclude each other"),
                           (["--tests", "a", "--seeds", "0"], "must be > 0"),
                           (["--tests", "a", "--seed-list", "1,x"], "comma-separated integers"),
                           (["--tests", "a", "--no-build", "--program", "/nonexistent/prog"], "not found")):
            rc, _, err = regress_cmd(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn(frag, err, args)

    def test_latest_symlink(self):
        with tempfile.TemporaryDirectory() as d:
            a = os.path.join(d, "smoke-1")
            os.makedirs(a)
            regress.update_latest(a)
            b = os.path.join(d, "smoke-2")
            os.makedirs(b)
            regress.update_latest(b)
            self.assertEqual(os.readlink(os.path.join(d, "latest")), "smoke-2")
            self.assertEqual(sorted(os.listdir(d)), ["latest", "smoke-1", "smoke-2"])   # no temporary left

    def test_concurrent_run_with_the_same_out_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            first = subprocess.Popen([sys.executable, TOOL, "--tests", "hang", "--seed-list", "1",
                                      "--timeout", "100", "--no-build", "--program", common.FAKE, "--out", d,
                                      "--no-rerun", "--testplan", os.path.join(d, "none")],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            try:
                log = os.path.join(d, "logs", "hang-1.log")
                for _ in range(100):        # until the first run is up
                    if os.path.exists(log) and os.path.getsize(log):
                        break
                    time.sleep(0.1)
                self.assertTrue(os.path.exists(log))
                rc, out, err = regress_cmd("--tests", "good", "--seed-list", "2", "--no-build",
                                           "--program", common.FAKE, "--out", d, "--no-rerun")
                self.assertEqual(rc, 2, out + err)
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertRegex(lines[0], r"^regress: error: .* is in use by another run \(pid \d+: tools/regress ")
                self.assertFalse(os.path.exists(os.path.join(d, "logs", "good-2.log")))
            finally:
                first.send_signal(signal.SIGINT)
                out, _ = first.communicate(timeout=60)
            self.assertEqual(first.returncode, 130, out)
            # the first run's report is its own
            self.assertEqual([(r["test"], r["seed"]) for r in results(d)["runs"]], [("hang", 1)])
            # once the first run has ended, the folder can be used again
            rc, out, err = regress_cmd("--tests", "good", "--seed-list", "2", "--no-build",
                                       "--program", common.FAKE, "--out", d, "--no-rerun")
            self.assertEqual(rc, 0, out + err)

    def test_default_folders_are_new_and_latest_follows(self):
        with tempfile.TemporaryDirectory() as d:
            old = regress.OUT_ROOT
            regress.OUT_ROOT = d
            try:
                argv = ["--tests", "good,flaky", "--seed-list", "3", "--no-build", "--program", common.FAKE,
                        "--no-rerun", "--testplan", os.path.join(d, "none")]
                with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
                    self.assertEqual(regress.main(argv), 1)
                    first = os.readlink(os.path.join(d, "latest"))
                    self.assertEqual(regress.main(argv), 1)
                    second = os.readlink(os.path.join(d, "latest"))
            finally:
                regress.OUT_ROOT = old
            self.assertNotEqual(first, second)
            self.assertRegex(first, r"^tests-\d{8}-\d{6}(-\d+)?$")
            for f in (first, second):
                self.assertTrue(os.path.exists(os.path.join(d, f, "report.html")))
                self.assertEqual(len(results(os.path.join(d, f))["runs"]), 2)
            self.assertTrue(os.path.exists(os.path.join(d, "latest", "report.html")))

    @staticmethod
    def _quiet_main_in(root, args):
        """regress.main(args) with its output root at root and its output silenced"""
        old = regress.OUT_ROOT
        regress.OUT_ROOT = root
        try:
            with open(os.devnull, "w") as null, contextlib.redirect_stderr(null), \
                    contextlib.redirect_stdout(null):
                return regress.main(args)
        finally:
            regress.OUT_ROOT = old

    def test_refused_plan_leaves_no_folder(self):
        with tempfile.TemporaryDirectory() as d:
            rc = self._quiet_main_in(d, ["--tests", "good,good", "--seed-list", "1", "--no-build",
                                         "--program", common.FAKE])
            self.assertEqual(rc, 2)
            self.assertEqual(os.listdir(d), [])

    def test_run_that_cannot_start_leaves_no_folder(self):
        with tempfile.TemporaryDirectory() as d:
            rc = self._quiet_main_in(d, ["--tests", "a", "--no-build", "--program", "/nonexistent/prog"])
            self.assertEqual(rc, 2)
            self.assertEqual(os.listdir(d), [])
            # a folder with more than the lock in it is kept
            keep = os.path.join(d, "x")
            os.makedirs(keep)
            with open(os.path.join(keep, "build.log"), "w") as f:
                f.write("failed\n")
            self.assertFalse(outdir.discard_if_unused(keep))
            self.assertTrue(os.path.exists(os.path.join(keep, "build.log")))

    def test_new_run_dir_never_shares(self):
        with tempfile.TemporaryDirectory() as d:
            now = datetime.datetime(2030, 1, 2, 3, 4, 5)
            got = []
            threads = [threading.Thread(target=lambda: got.append(outdir.new_run_dir(d, "smoke", now)))
                       for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(len(set(got)), 8)
            self.assertIn(os.path.join(d, "smoke-20300102-030405"), got)
            self.assertIn(os.path.join(d, "smoke-20300102-030405-8"), got)

    def test_lock_in_process(self):
        with tempfile.TemporaryDirectory() as d:
            lock = outdir.RunLock(d, "tools/regress -r smoke")
            with self.assertRaisesRegex(ToolError, r"is in use by another run \(pid \d+: tools/regress -r smoke\)"):
                outdir.RunLock(d, "second")
            lock.release()
            outdir.RunLock(d, "third").release()


if __name__ == "__main__":
    unittest.main()
