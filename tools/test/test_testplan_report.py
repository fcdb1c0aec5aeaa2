"""Testplan status (regresslib.testplan) and the reports written from a results record
(regresslib.report): junit.xml, report.md, report.html."""
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET

import common
from regresslib import config, report, testplan
from regresslib.coverage import Group
from regresslib.runner import Run


def tp(name, tests, cgs=(), stage="V2"):
    return config.Testpoint(name, stage, "d", list(tests), list(cgs))


def run(test, status):
    r = Run(0, test, 1, "fast", "/p", [], 1.0, "/l")
    r.status = status
    return r


class Status(unittest.TestCase):
    def test_written_passing_covered(self):
        tps = [tp("a", ["t1", "t2"], ["cg1"]), tp("b", ["t3"], ["cg1", "cg2"]), tp("c", ["t4"]),
               tp("d", ["t5"], ["cg3"])]
        runs = [run("t1", "pass"), run("t2", "pass"), run("t3", "fail"), run("t3", "pass"),
                run("t5", "skipped")]
        groups = {"cg1": Group("cg1", [("x", 1, 1), ("y", 2, 1)]),
                  "cg2": Group("cg2", [("x", 1, 2)])}
        st = {s.name: s for s in testplan.evaluate(tps, ["t1", "t2", "t3", "t5"], runs, groups)}
        self.assertEqual((st["a"].written, st["a"].passing, st["a"].covered), (True, True, True))
        self.assertEqual((st["b"].passing, st["b"].covered, st["b"].failed), (False, False, 1))
        self.assertIn("cg2 0.0%", st["b"].cov_detail)
        self.assertEqual((st["c"].written, st["c"].missing, st["c"].passing, st["c"].covered),
                         (False, ["t4"], False, None))
        self.assertEqual((st["d"].runs, st["d"].passing, st["d"].covered), (0, False, False))
        self.assertIn("cg3 absent", st["d"].cov_detail)

    def test_list_only(self):
        st = testplan.evaluate([tp("a", ["t1"], ["cg"], "V1"), tp("b", ["t2"])], ["t1"])
        self.assertEqual([(s.written, s.passing, s.covered) for s in st],
                         [(True, None, None), (False, None, None)])
        text = testplan.format_text(st)
        self.assertIn("missing: t2", text)
        self.assertIn("V1: 1 testpoints, 1 written, 0 passing, 0 covered", text)
        rows = testplan.table_rows(st)
        self.assertEqual(rows[0][:5], ["a", "V1", "yes", "-", "-"])
        self.assertEqual(rows[1][:5], ["b", "V2", "NO", "-", "n/a"])

    def test_list_tests(self):
        self.assertEqual(testplan.list_tests(common.FAKE)[:3], ["good", "flaky", "fatal"])


def results():
    runs = [
        {"test": "t1", "seed": 11, "build": "fast", "status": "pass", "message": "", "key": "",
         "returncode": 0, "duration": 1.5, "errors": 0, "fatals": 0, "warnings": 0,
         "log": "logs/t1-11.log", "reproduce": "prog --test t1 --seed 11", "cov_out": ""},
        {"test": "t1", "seed": 12, "build": "fast", "status": "fail",
         "message": "ERROR @ 5: env.sb [SB] byte 3 <bad> & | wrong", "key": "ERROR env.sb [SB] byte # <bad> & | wrong",
         "returncode": 1, "duration": 2.0, "errors": 1, "fatals": 0, "warnings": 0,
         "log": "logs/t1-12.log", "reproduce": "prog --test t1 --seed 12", "cov_out": ""},
        {"test": "t2", "seed": 13, "build": "fast", "status": "timeout", "message": "RUNNER [TIMEOUT] x",
         "key": "RUNNER [TIMEOUT] x", "returncode": -15, "duration": 9.0, "errors": 0, "fatals": 0,
         "warnings": 0, "log": "logs/t2-13.log", "reproduce": "prog --test t2 --seed 13", "cov_out": ""},
        {"test": "t2", "seed": 14, "build": "fast", "status": "skipped", "message": "not run: budget",
         "key": "", "returncode": None, "duration": 0.0, "errors": 0, "fatals": 0, "warnings": 0,
         "log": "logs/t2-14.log", "reproduce": "prog --test t2 --seed 14", "cov_out": ""},
    ]
    return {
        "regression": "smoke", "desc": "quick", "master_seed": 77, "build": "fast",
        "coverage_enabled": True, "started": "2025-01-01T00:00:00+00:00", "wall_s": 12.0, "jobs": 2,
        "budget_min": None, "out": "build/regress/x", "stop_reason": "budget of 1 min spent",
        "command": "tools/regress -r smoke",
        "counts": {"total": 4, "passed": 1, "failed": 2, "skipped": 1, "pass": 1, "fail": 1,
                   "crash": 0, "timeout": 1, "error": 0},
        "runs": runs,
        "buckets": [{"key": runs[1]["key"], "count": 1, "first_message": runs[1]["message"],
                     "tests": ["t1"], "failures": [{k: runs[1][k] for k in
                                                    ("test", "seed", "status", "message", "reproduce", "log")}],
                     "rerun": {"test": "t1", "seed": 12, "outcome": "failed again, same bucket",
                               "waves": "w/t1-12.fst", "log": "logs/rerun-t1-12.log", "reproduce": "x"}},
                    {"key": runs[2]["key"], "count": 1, "first_message": runs[2]["message"],
                     "tests": ["t2"], "failures": [{k: runs[2][k] for k in
                                                    ("test", "seed", "status", "message", "reproduce", "log")}],
                     "rerun": None}],
        "tests": [{"test": "t1", "runs": 2, "passed": 1, "failed": 1, "skipped": 0},
                  {"test": "t2", "runs": 2, "passed": 0, "failed": 1, "skipped": 1}],
        "coverage": {"inputs": 3, "merged_dat": "m.dat", "merged_info": "m.info", "html": "",
                     "notes": ["genhtml failed"],
                     "line": {"hit": 3, "total": 4, "files": [{"file": "rtl/a.sv", "hit": 3, "total": 4}]},
                     "toggle": {"hit": 5, "total": 10, "files": [{"file": "rtl/a.sv", "hit": 5, "total": 10}]},
                     "functional": {"hit": 1, "total": 2, "groups": [
                         {"name": "cg_wr", "hit": 1, "total": 2, "missed": ["op:read"], "tests": {"t1": 1},
                          "bins": [{"bin": "op:write", "count": 3, "at_least": 1, "tests": {"t1": 1}},
                                   {"bin": "op:read", "count": 0, "at_least": 1, "tests": {}}]}]}},
        "testplan": [{"name": "tp1", "stage": "V1", "desc": "d", "tests": ["t1", "t2"], "covergroups": ["cg_wr"],
                      "written": True, "missing": [], "runs": 4, "failed": 2, "passing": False,
                      "covered": False, "coverage": "cg_wr 50.0% (bins hit by 1 tests)",
                      "test_runs": {"t1": [1, 2], "t2": [0, 1]}}],
        "testplan_note": "",
    }


class Reports(unittest.TestCase):
    def test_junit(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "logs"))
            with open(os.path.join(d, "logs", "t1-12.log"), "w") as f:
                f.write("SEED 12\nERROR @ 5: env.sb [SB] byte 3\n")
            p = os.path.join(d, "junit.xml")
            report.write_junit(results(), p, d)
            root = ET.parse(p).getroot()
            suite = root.find("testsuite")
            self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("errors"),
                              suite.get("skipped")), ("4", "1", "1", "1"))
            cases = suite.findall("testcase")
            self.assertEqual([c.get("name") for c in cases],
                             ["t1 seed 11", "t1 seed 12", "t2 seed 13", "t2 seed 14"])
            self.assertEqual(cases[0].get("classname"), "smoke.t1")
            self.assertEqual(len(list(cases[0])), 0)
            fail = cases[1].find("failure")
            self.assertEqual(fail.get("message"), "ERROR @ 5: env.sb [SB] byte 3 <bad> & | wrong")
            self.assertIn("reproduce: prog --test t1 --seed 12", fail.text)
            self.assertIn("ERROR @ 5", cases[1].find("system-out").text)
            self.assertEqual(cases[2].find("error").get("type"), "timeout")
            self.assertEqual(cases[3].find("skipped").get("message"), "not run: budget")

    def test_markdown_and_html(self):
        doc = report.build_document(results())
        md = report.render_md(doc)
        self.assertIn("# Regression smoke", md)
        self.assertIn("| result | FAILED |", md)
        self.assertIn("### Bucket 1: 1 failure in t1\n\n`ERROR env.sb [SB] byte # <bad> & | wrong`", md)
        self.assertIn("| t1 | 12 | fast | fail | 2.0 | ERROR @ 5: env.sb [SB] byte 3 &lt;bad&gt; &amp; \\| wrong |", md)
        self.assertIn("`prog --test t1 --seed 12`", md)
        self.assertIn("Debug rerun of t1 seed 12: failed again, same bucket", md)
        self.assertIn("| toggle coverage (rtl/) | 50.0% (5/10) |", md)
        self.assertIn("| rtl/a.sv | 3/4 | 75.0% (3/4) | 5/10 | 50.0% (5/10) |", md)
        self.assertIn("| cg_wr | 1 | 2 | 50.0% (1/2) | op:read | t1 1 |", md)
        self.assertIn("| tp1 | V1 | yes | NO | NO | t1, t2 | 2/4 runs passed; t1 1/2, t2 0/1; "
                      "cg_wr 50.0% (bins hit by 1 tests) |", md)
        self.assertIn("| stopped early | budget of 1 min spent |", md)
        self.assertIn("Note: genhtml failed", md)
        html = report.render_html(doc, "t")
        self.assertIn("&lt;bad&gt; &amp;", html)
        self.assertNotIn("<bad>", html)
        self.assertIn('<td class="FAIL">FAIL</td>', html)
        self.assertTrue(html.rstrip().endswith("</html>"))


class Bins(unittest.TestCase):
    def test_bins_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = report.write_bins(results()["coverage"], os.path.join(d, "coverage", "bins.md"))
            with open(p) as f:
                md = f.read()
            self.assertIn("## cg_wr: 50.0% (1/2)", md)
            self.assertIn("| op:write | 3 | 1 | t1 1 |", md)
            self.assertIn("| op:read **missed** | 0 | 1 | - |", md)


if __name__ == "__main__":
    unittest.main()
