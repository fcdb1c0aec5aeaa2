"""Regression history (regresslib.history): records appended to the history file, the trend
the report shows (plot and table), the nightly default file and tools/regress --history."""
import argparse
import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

import common
from regresslib import history, regress, report

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False


def res(name="smoke", passed=3, failed=1, cov=None, date="2026-01-01T01:00:00+00:00", wall=60.0):
    return {"regression": name, "master_seed": 5, "started": date, "wall_s": wall, "out": "build/regress/x",
            "counts": {"total": passed + failed, "passed": passed, "failed": failed, "skipped": 0},
            "coverage": cov, "backend": {"name": "slurm"}}


class Records(unittest.TestCase):
    def test_regress_record(self):
        cov = {"line": {"hit": 1, "total": 4}, "toggle": {"hit": 1, "total": 3},
               "functional": {"hit": 0, "total": 0}}
        r = history.regress_record(res(cov=cov))
        self.assertEqual((r["kind"], r["regression"], r["runs"], r["passed"], r["failed"], r["backend"]),
                         ("regress", "smoke", 4, 3, 1, "slurm"))
        self.assertEqual((r["line_pct"], r["toggle_pct"], r["functional_pct"]), (25.0, 33.33, None))
        if shutil.which("git") and os.path.exists(os.path.join(common.ROOT, ".git")):
            self.assertRegex(r["git_rev"], r"^[0-9a-f]{4,}(-dirty)?$")
        else:
            self.assertEqual(r["git_rev"], "")         # e.g. a fresh machine without git
        r = history.regress_record(res())
        self.assertEqual((r["line_pct"], r["toggle_pct"], r["functional_pct"]), (None, None, None))
        m = history.mutate_record("smoke", 1, 90, 100, 12.5, "out")
        self.assertEqual((m["kind"], m["kill_rate_pct"], m["mutants"]), ("mutate", 90.0, 100))

    def test_append_load_trend(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "sub", "history.jsonl")
            history.append(path, history.regress_record(res("nightly")))
            with open(path, "a") as f:
                f.write("not json\n[1, 2]\n{\"kind\": \"other\", \"date\": \"x\"}\n")
            history.append(path, history.regress_record(res("smoke")))
            history.append(path, history.mutate_record("smoke", 1, 9, 10, 1.0, "o"))
            recs = history.load(path)
            self.assertEqual([r["kind"] for r in recs], ["regress", "regress", "mutate"])
            self.assertEqual([r["regression"] for r in history.trend(recs, "nightly")], ["nightly", "smoke"])
            self.assertEqual(history.load(os.path.join(d, "none")), [])

    def test_plot_needs_two_runs(self):
        with tempfile.TemporaryDirectory() as d:
            png = os.path.join(d, "h.png")
            one = [history.regress_record(res())]
            self.assertIn("second run", history.plot(one, "smoke", png))
            self.assertFalse(os.path.exists(png))

    @unittest.skipUnless(HAVE_MPL, "matplotlib not installed")
    def test_plot(self):
        with tempfile.TemporaryDirectory() as d:
            png = os.path.join(d, "h.png")
            cov = {"line": {"hit": 1, "total": 4}, "toggle": {"hit": 1, "total": 3},
                   "functional": {"hit": 2, "total": 4}}
            recs = [history.regress_record(res(cov=cov, date=f"2026-01-0{i}T01:00:00+00:00", wall=60.0 * i))
                    for i in (1, 2, 3)]
            recs.insert(2, history.mutate_record("smoke", 1, 9, 10, 1.0, "o"))
            recs[2]["date"] = "2026-01-02T12:00:00+00:00"
            self.assertEqual(history.plot(recs, "smoke", png), "")
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


class Report(unittest.TestCase):
    def test_section(self):
        recs = [history.regress_record(res()), history.mutate_record("smoke", 1, 9, 10, 1.0, "o")]
        sec = history.report_section(recs, "smoke", "h.jsonl", "history.png", "")
        doc = report.history_blocks(sec)
        self.assertIn(("img", "history.png", "history of regression smoke"), doc)
        rows = doc[-1][2]
        self.assertEqual(rows[0][2:4], ["tools/mutate (smoke)", "10"])
        self.assertEqual(rows[0][9], "90.0%")
        self.assertEqual(rows[1][2:6], ["smoke (slurm)", "4", "3", "1"])
        html = report.render_html(doc, "t")
        self.assertIn('<img src="history.png" alt="history of regression smoke">', html)
        self.assertIn("![history of regression smoke](history.png)", report.render_md(doc))
        sec = history.report_section(recs[:1], "smoke", "h.jsonl", "", "the trend plot starts later")
        self.assertIn(("p", "Note: the trend plot starts later"), report.history_blocks(sec))


class Regress(unittest.TestCase):
    def test_default_file(self):
        plan = argparse.Namespace(name="nightly")
        a = argparse.Namespace(no_history=False, history=None)
        self.assertEqual(regress.history_file(a, plan, "/x/regress/nightly-1"), "/x/regress/history.jsonl")
        self.assertIsNone(regress.history_file(a, argparse.Namespace(name="smoke"), "/x/r/s"))
        self.assertIsNone(regress.history_file(argparse.Namespace(no_history=True, history=None), plan, "/x/r/n"))
        self.assertEqual(regress.history_file(argparse.Namespace(no_history=False, history="h.jsonl"),
                                              argparse.Namespace(name="smoke"), "/x"), os.path.abspath("h.jsonl"))

    def test_three_runs_with_history(self):
        with tempfile.TemporaryDirectory() as d:
            hfile = os.path.join(d, "history.jsonl")
            for i, seeds in enumerate(("1,2", "3,4", "6,7")):     # flaky fails on multiples of 3
                out = os.path.join(d, f"run{i}")
                with contextlib.redirect_stdout(io.StringIO()):
                    rc = regress.main(["--tests", "good,flaky", "--seed-list", seeds, "--no-build",
                                       "--program", common.FAKE, "--out", out, "--no-rerun", "--history", hfile,
                                       "--testplan", os.path.join(d, "none")])
                self.assertEqual(rc, 1 if i in (1, 2) else 0)
            recs = history.load(hfile)
            self.assertEqual([(r["passed"], r["failed"]) for r in recs], [(4, 0), (3, 1), (3, 1)])
            with open(os.path.join(out, "results.json")) as f:
                h = json.load(f)["history"]
            self.assertEqual(h["records"], 3)
            with open(os.path.join(out, "report.html")) as f:
                page = f.read()
            self.assertIn('<h2 id="history">History</h2>', page)
            if HAVE_MPL:
                self.assertTrue(os.path.exists(os.path.join(out, "history.png")))
                self.assertIn('<img src="history.png"', page)
            with open(os.path.join(d, "run0", "report.md")) as f:
                self.assertIn("the trend plot starts with the second run", f.read())


if __name__ == "__main__":
    unittest.main()
