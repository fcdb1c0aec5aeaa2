"""Seed derivation and run execution: timeouts that kill the whole process group, budget and
fail-fast skipping (regresslib.runner)."""
import os
import re
import tempfile
import time
import unittest

import common
from regresslib import runner
from regresslib.runner import Executor, Run, derive_seed


class Seeds(unittest.TestCase):
    def test_reference_values(self):
        self.assertEqual(runner.splitmix64(0), 0xE220A8397B1DCDAF)
        self.assertEqual(runner.fnv1a64(""), 0xCBF29CE484222325)
        self.assertEqual(runner.fnv1a64("a"), 0xAF63DC4C8601EC8C)

    def test_derived_seeds(self):
        a = [derive_seed(7, "cr_ops", i) for i in range(50)]
        self.assertEqual(a, [derive_seed(7, "cr_ops", i) for i in range(50)])   # reproducible
        self.assertEqual(len(set(a)), 50)
        self.assertTrue(all(0 <= s < 2**32 for s in a))
        self.assertNotEqual(a[0], derive_seed(8, "cr_ops", 0))
        self.assertNotEqual(a[0], derive_seed(7, "cr_sizes", 0))


def fake_run(d, test, seed=1, timeout=10.0, index=0):
    return Run(index, test, seed, "fast", common.FAKE, [], timeout,
               os.path.join(d, f"{test}-{seed}-{index}.log"))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (not yet reaped by its parent) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class Execute(unittest.TestCase):
    def test_pass_and_fail(self):
        with tempfile.TemporaryDirectory() as d:
            r = runner.execute(fake_run(d, "good", 4))
            self.assertEqual((r.status, r.returncode, r.warnings), ("pass", 0, 1))
            r = runner.execute(fake_run(d, "flaky", 9))
            self.assertEqual((r.status, r.errors), ("fail", 2))
            self.assertIn("[SB_MISMATCH] byte 9 at 0x240", r.message)
            self.assertEqual(r.reproduce(), os.path.relpath(common.FAKE, common.ROOT) + " --test flaky --seed 9")

    def test_timeout_kills_the_process_group(self):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.monotonic()
            r = runner.execute(fake_run(d, "hang", timeout=1.0))
            self.assertLess(time.monotonic() - t0, 8.0)
            self.assertEqual(r.status, "timeout")
            with open(r.log) as f:
                child = int(re.search(r"child pid (\d+)", f.read()).group(1))
            for _ in range(50):
                if not alive(child):
                    break
                time.sleep(0.1)
            self.assertFalse(alive(child), "the run's child process outlived the timeout")

    def test_launch_error(self):
        with tempfile.TemporaryDirectory() as d:
            r = fake_run(d, "good")
            r.program = os.path.join(d, "missing")
            runner.execute(r)
            self.assertEqual(r.status, "error")
            self.assertIn("RUNNER [LAUNCH] cannot run", r.message)


class Scheduling(unittest.TestCase):
    def test_budget_skips_later_runs(self):
        with tempfile.TemporaryDirectory() as d:
            runs = [fake_run(d, "hang", timeout=1.0, index=0)] + [fake_run(d, "good", index=i) for i in (1, 2)]
            ex = Executor(1, budget_s=0.3)
            ex.run_all(runs)
            self.assertEqual([r.status for r in runs], ["timeout", "skipped", "skipped"])
            self.assertIn("budget", runs[1].message)

    def test_fail_fast(self):
        with tempfile.TemporaryDirectory() as d:
            runs = [fake_run(d, "fatal", index=0)] + [fake_run(d, "good", index=i) for i in (1, 2)]
            done = []
            Executor(1, fail_fast=True, on_done=done.append).run_all(runs)
            self.assertEqual([r.status for r in runs], ["fail", "skipped", "skipped"])
            self.assertEqual(len(done), 3)

    def test_parallel(self):
        with tempfile.TemporaryDirectory() as d:
            runs = [fake_run(d, "good", seed=s, index=s) for s in range(6)]
            Executor(3).run_all(runs)
            self.assertEqual({r.status for r in runs}, {"pass"})


if __name__ == "__main__":
    unittest.main()
