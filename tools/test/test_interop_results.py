"""tools/interop: the results writer (tools/interop/results.py: results.md and results.json with
verdict, totals and failure reasons), fed with run records, and the runner's output folder
lock, without qemu."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

import common
from regresslib import outdir

sys.path.insert(0, os.path.join(common.TOOLS, "interop"))
import results as interop_results  # noqa: E402

RUN = os.path.join(common.TOOLS, "interop", "run")


def rec(name, status, why="", note=""):
    return {"name": name, "tool": "ib_write_bw", "op": "write", "size": 64, "mtu": 1024,
            "initiator": "srnic", "iters": 64, "frames": 130, "rxe_retransmits": 0,
            "srnic": {"ok": status == "pass", "sim_us": 812.4, "guest_run_s": 1.25},
            "wall_s": 3.5, "note": note, "why": why, "pass": status == "pass", "status": status}


def three():
    return [rec("a-pass", "pass", note="guest t_avg 2045 us"),
            rec("b-fail", "fail", why="srnic: data mismatch at byte 17 | QP 3; pcap: 2 NAK(s) from rxe (02-b.check.log)"),
            rec("c-error", "error", why="guest: no answer from the guest control channel")]


class Writer(unittest.TestCase):
    def write(self, results, info):
        with tempfile.TemporaryDirectory() as d:
            jp, mp = interop_results.write_reports(results, d, info)
            with open(jp) as f:
                js = json.load(f)
            with open(mp) as f:
                md = f.read()
            return js, md

    def test_reasons_and_totals(self):
        js, md = self.write(three(), {"seed": 7, "planned": 3, "aborted": "", "times": {"boot_s": 10.0}})
        self.assertIn("**FAILED**: 3 runs: 1 passed, 1 failed, 1 errors", md)
        rows = {line.split(" | ")[0][2:]: line for line in md.splitlines() if line.startswith("| ")}
        self.assertIn("| FAIL | srnic: data mismatch at byte 17 \\| QP 3; pcap: 2 NAK(s) from rxe "
                      "(02-b.check.log) |", rows["b-fail"])
        self.assertIn("| ERROR | guest: no answer from the guest control channel |", rows["c-error"])
        self.assertIn("| PASS |  | guest t_avg 2045 us |", rows["a-pass"])
        self.assertIn("| 1 PASS, 1 FAIL, 1 ERROR |", rows["total"])
        self.assertIn("seed `7`", md)
        self.assertEqual(js["totals"], {"total": 3, "passed": 1, "failed": 1, "errors": 1, "not_run": 0})
        self.assertEqual(js["verdict"], "FAILED")
        self.assertEqual([r["why"] for r in js["runs"]][1:], [three()[1]["why"], three()[2]["why"]])

    def test_every_failed_row_has_its_reason(self):
        _, md = self.write(three(), {"planned": 3})
        for line in md.splitlines():
            cells = [c.strip() for c in line.split(" | ")]
            if line.startswith("| ") and len(cells) > 13 and cells[12] in ("FAIL", "ERROR"):
                self.assertTrue(cells[13], line)

    def test_passed_and_aborted(self):
        _, md = self.write([rec("a", "pass")], {"planned": 1})
        self.assertIn("**PASSED**: 1 runs: 1 passed, 0 failed, 0 errors", md)
        js, md = self.write([rec("a", "pass")], {"planned": 4, "aborted": "guest did not come up: '' (see x)"})
        self.assertIn("**FAILED**: 4 runs: 1 passed, 0 failed, 0 errors, 3 not run", md)
        self.assertIn("Aborted: guest did not come up", md)
        self.assertEqual(js["totals"]["not_run"], 3)
        self.assertIn("| 1 PASS, 0 FAIL, 0 ERROR, 3 not run |", md)
        _, md = self.write([], {"planned": 0})
        self.assertIn("**NO RUNS**", md)

    def test_old_records_without_status(self):
        r = rec("x", "fail", why="guest tool rc=1")
        del r["status"]
        self.assertEqual(interop_results.status(r), "fail")
        self.assertEqual(interop_results.totals([r])["failed"], 1)


class RunnerFolder(unittest.TestCase):
    def stub_tools(self, d):
        """qemu-system-x86_64, busybox and tshark stand-ins that must never be started."""
        bin_dir = os.path.join(d, "bin")
        os.makedirs(bin_dir)
        for t in ("qemu-system-x86_64", "busybox", "tshark"):
            p = os.path.join(bin_dir, t)
            with open(p, "w") as f:
                f.write("#!/bin/sh\necho started >> " + os.path.join(d, "started") + "\nexit 1\n")
            os.chmod(p, os.stat(p).st_mode | stat.S_IEXEC)
        return dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])

    def test_locked_out_folder_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            env = self.stub_tools(d)
            out = os.path.join(d, "out")
            lock = outdir.RunLock(out, "tools/interop/run --only x")
            try:
                p = subprocess.run([sys.executable, RUN, "--out", out, "--build", os.path.join(d, "build")],
                                   capture_output=True, text=True, env=env, timeout=60)
            finally:
                lock.release()
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            lines = p.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertRegex(lines[0], r"^interop: error: .*out is in use by another run \(pid \d+: "
                                       r"tools/interop/run --only x\)")
            self.assertFalse(os.path.exists(os.path.join(out, "results.md")))
            self.assertFalse(os.path.exists(os.path.join(d, "started")))
            self.assertFalse(os.path.exists(os.path.join(d, "build")))

    def test_aborted_run_writes_its_reason_and_latest(self):
        """A build that fails: the run still leaves results.md with the reason, in its own new
        folder below BUILD/interop, and latest points at it."""
        with tempfile.TemporaryDirectory() as d:
            env = dict(self.stub_tools(d), SRNIC_VERILATOR_LOCK="")
            build = os.path.join(d, "build")
            os.makedirs(build)
            with open(os.path.join(build, "build.ninja"), "w") as f:
                f.write("# not a CMake build directory\n")
            folders = []
            for _ in range(2):
                p = subprocess.run([sys.executable, RUN, "--build", build, "--only", "ib_write_lat", "--seed", "9"],
                                   capture_output=True, text=True, env=env, timeout=120)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertIn("interop: FAILED: 2 runs: 0 passed, 0 failed, 0 errors, 2 not run", p.stdout)
                folders.append(os.readlink(os.path.join(build, "interop", "latest")))
            self.assertNotEqual(folders[0], folders[1])
            for f in folders:
                self.assertRegex(f, r"^run-\d{8}-\d{6}(-\d+)?$")
            with open(os.path.join(build, "interop", "latest", "results.md")) as f:
                md = f.read()
            self.assertIn("**FAILED**: 2 runs: 0 passed, 0 failed, 0 errors, 2 not run", md)
            self.assertRegex(md, r"Aborted: .*cmake --build .* failed with exit code \d+")
            self.assertIn("seed `9`", md)
            with open(os.path.join(build, "interop", "latest", "results.json")) as f:
                js = json.load(f)
            self.assertEqual((js["verdict"], js["planned"], js["runs"]), ("FAILED", 2, []))
            self.assertFalse(os.path.exists(os.path.join(d, "started")))   # no qemu was started


if __name__ == "__main__":
    unittest.main()
