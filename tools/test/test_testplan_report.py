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


def tp(name, tests, cgs=(), stage="V2", needs_coverage=False):
    return config.Testpoint(name, stage, "d", list(tests), list(cgs), needs_coverage)


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

    def test_passing_needs_every_test_to_have_run(self):
        # many_qps names two tests; only one of them ran (and passed): not passing
        tps = [tp("many_qps", ["cr_many_qps", "cr_thousands_qps"]), tp("one", ["cr_many_qps"]),
               tp("skipped_only", ["t_skip"])]
        runs = [run("cr_many_qps", "pass"), run("cr_many_qps", "pass"), run("t_skip", "skipped")]
        st = {s.name: s for s in testplan.evaluate(tps, ["cr_many_qps", "cr_thousands_qps", "t_skip"], runs)}
        self.assertIs(st["many_qps"].passing, False)
        self.assertEqual(st["many_qps"].why, "not run: cr_thousands_qps")
        self.assertEqual(st["many_qps"].test_runs, {"cr_many_qps": [2, 2], "cr_thousands_qps": [0, 0]})
        self.assertIs(st["one"].passing, True)
        self.assertEqual(st["one"].why, "")
        self.assertIs(st["skipped_only"].passing, False)
        self.assertEqual(st["skipped_only"].why, "not run: t_skip")
        rows = {r[0]: r for r in testplan.table_rows(st.values())}
        self.assertEqual(rows["many_qps"][3], "NO: not run: cr_thousands_qps")
        self.assertEqual(rows["one"][3], "yes")

    def test_failure_reason_names_the_failing_tests(self):
        st = testplan.evaluate([tp("a", ["t1", "t2", "t3"])], ["t1", "t2", "t3"],
                               [run("t1", "pass"), run("t2", "fail"), run("t2", "timeout")])[0]
        self.assertIs(st.passing, False)
        self.assertEqual(st.why, "not run: t3; failed: 2/3 runs (t2)")

    def test_coverage_testpoint_needs_collected_coverage(self):
        tps = [tp("coverage_closure", ["t1", "t2"], ["cg1"], "V3", needs_coverage=True),
               tp("plain", ["t1", "t2"], ["cg1"])]
        runs = [run("t1", "pass"), run("t2", "pass")]
        groups = {"cg1": Group("cg1", [("x", 1, 1)])}
        # fast build: no coverage collected, every run passed
        st = {s.name: s for s in testplan.evaluate(tps, ["t1", "t2"], runs)}
        self.assertIs(st["coverage_closure"].passing, False)
        self.assertEqual(st["coverage_closure"].why, "no coverage collected in this run")
        self.assertIs(st["plain"].passing, True)
        # coverage collected, but not from t2
        st = {s.name: s for s in testplan.evaluate(tps, ["t1", "t2"], runs, groups, None, {"t1"})}
        self.assertIs(st["coverage_closure"].passing, False)
        self.assertEqual(st["coverage_closure"].why, "no coverage from: t2")
        # a failed test is named once, as failed
        st = testplan.evaluate(tps, ["t1", "t2"], [run("t1", "pass"), run("t2", "fail")], groups, None, {"t1"})[0]
        self.assertEqual(st.why, "failed: 1/2 runs (t2)")
        # coverage from both
        st = {s.name: s for s in testplan.evaluate(tps, ["t1", "t2"], runs, groups, None, {"t1", "t2"})}
        self.assertEqual((st["coverage_closure"].passing, st["coverage_closure"].covered), (True, True))
        self.assertTrue(st["coverage_closure"].to_json()["needs_coverage"])

    def test_needs_coverage_key(self):
        data = {"testpoint": [{"name": "c", "stage": "V3", "desc": "d", "tests": ["t"],
                               "needs_coverage": True},
                              {"name": "p", "stage": "V1", "desc": "d", "tests": ["t"]}]}
        tps = config.parse_testplan(data)
        self.assertEqual([t.needs_coverage for t in tps], [True, False])
        data["testpoint"][0]["needs_coverage"] = "yes"
        with self.assertRaisesRegex(Exception, "'needs_coverage' must be true or false"):
            config.parse_testplan(data)

    def test_project_testplan_marks_coverage_closure(self):
        tps = {t.name: t for t in config.load_testplan(os.path.join(common.ROOT, "verif", "testplan.toml"))}
        self.assertTrue(tps["coverage_closure"].needs_coverage)

    def test_list_only(self):
        st = testplan.evaluate([tp("a", ["t1"], ["cg"], "V1"), tp("b", ["t2"])], ["t1"])
        self.assertEqual([(s.written, s.passing, s.covered) for s in st],
                         [(True, None, None), (False, None, None)])
        text = testplan.format_text(st)
        self.assertIn("missing: t2", text)
        self.assertIn("V1: 1 testpoints, 1 written, 0 passing, 0 covered", text)
        self.assertIn("total: 2 testpoints, 1 written, 0 passing, 0 covered", text)
        rows = testplan.table_rows(st)
        self.assertEqual(rows[0][:5], ["a", "V1", "yes", "-", "-"])
        self.assertEqual(rows[1][:5], ["b", "V2", "NO", "-", "n/a"])

    def test_list_tests(self):
        self.assertEqual(testplan.list_tests(common.FAKE)[:3], ["good", "flaky", "fatal"])


def results():
    runs = [
        {"test": "t1", "seed": 11, "build": "fast", "status": "pass", "message": "", "key": "",
         "returncode": 0, "duration": 1.5, "errors": 0, "fatals": 0, "warnings": 0,
         "log": "build/regress/x/logs/t1-11.log", "reproduce": "prog --test t1 --seed 11", "cov_out": ""},
        {"test": "t1", "seed": 12, "build": "fast", "status": "fail",
         "message": "ERROR @ 5: env.sb [SB] byte 3 <bad> & | wrong", "key": "ERROR env.sb [SB] byte # <bad> & | wrong",
         "returncode": 1, "duration": 2.0, "errors": 1, "fatals": 0, "warnings": 0,
         "log": "build/regress/x/logs/t1-12.log", "reproduce": "prog --test t1 --seed 12", "cov_out": ""},
        {"test": "t2", "seed": 13, "build": "fast", "status": "timeout", "message": "RUNNER [TIMEOUT] x",
         "key": "RUNNER [TIMEOUT] x", "returncode": -15, "duration": 9.0, "errors": 0, "fatals": 0,
         "warnings": 0, "log": "build/regress/x/logs/t2-13.log", "reproduce": "prog --test t2 --seed 13", "cov_out": ""},
        {"test": "t2", "seed": 14, "build": "fast", "status": "skipped", "message": "not run: budget",
         "key": "", "returncode": None, "duration": 0.0, "errors": 0, "fatals": 0, "warnings": 0,
         "log": "build/regress/x/logs/t2-14.log", "reproduce": "prog --test t2 --seed 14", "cov_out": ""},
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
                               "waves": "build/regress/x/waves/t1-12.fst",
                               "log": "build/regress/x/logs/rerun-t1-12.log", "reproduce": "x"}},
                    {"key": runs[2]["key"], "count": 1, "first_message": runs[2]["message"],
                     "tests": ["t2"], "failures": [{k: runs[2][k] for k in
                                                    ("test", "seed", "status", "message", "reproduce", "log")}],
                     "rerun": None}],
        "tests": [{"test": "t1", "runs": 2, "passed": 1, "failed": 1, "skipped": 0},
                  {"test": "t2", "runs": 2, "passed": 0, "failed": 1, "skipped": 1}],
        "coverage": {"inputs": 3, "merged_dat": "build/regress/x/coverage/merged.dat",
                     "merged_info": "m.info", "html": "build/regress/x/coverage/html/index.html",
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
                      "test_runs": {"t1": [1, 2], "t2": [0, 1]}, "needs_coverage": False,
                      "why": "failed: 2/3 runs (t1, t2)"}],
        "testplan_note": "",
    }


class Reports(unittest.TestCase):
    def write_junit(self, res):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "build", "regress", "x", "logs"))
            with open(os.path.join(d, "build", "regress", "x", "logs", "t1-12.log"), "w") as f:
                f.write("SEED 12\nERROR @ 5: env.sb [SB] byte 3\n")
            p = os.path.join(d, "junit.xml")
            report.write_junit(res, p, d)
            return ET.parse(p).getroot()

    def test_junit(self):
        root = self.write_junit(results())
        self.assertEqual(root.tag, "testsuites")
        self.assertEqual((root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")),
                         ("4", "1", "1", "1"))
        suites = root.findall("testsuite")
        self.assertEqual([s.get("name") for s in suites], ["smoke.t1#1", "smoke.t1#2", "smoke.t2#1", "smoke.t2#2"])
        self.assertEqual([(s.get("tests"), s.get("failures"), s.get("errors"), s.get("skipped")) for s in suites],
                         [("1", "0", "0", "0"), ("1", "1", "0", "0"), ("1", "0", "1", "0"), ("1", "0", "0", "1")])
        cases = [s.find("testcase") for s in suites]
        self.assertTrue(all(len(s.findall("testcase")) == 1 for s in suites))
        self.assertEqual([(c.get("classname"), c.get("name")) for c in cases],
                         [("smoke.t1", "t1#1"), ("smoke.t1", "t1#2"), ("smoke.t2", "t2#1"), ("smoke.t2", "t2#2")])
        props = [{p.get("name"): p.get("value") for p in s.find("properties")} for s in suites]
        self.assertEqual([p["seed"] for p in props], ["11", "12", "13", "14"])
        self.assertEqual((props[1]["test"], props[1]["run"], props[1]["master_seed"], props[1]["build"]),
                         ("t1", "2", "77", "fast"))
        self.assertTrue(cases[0].find("system-out").text.startswith("seed: 11\nreproduce: prog --test t1 --seed 11\n"))
        self.assertIsNone(cases[0].find("failure"))
        fail = cases[1].find("failure")
        self.assertEqual(fail.get("message"), "ERROR @ 5: env.sb [SB] byte 3 <bad> & | wrong")
        self.assertIn("reproduce: prog --test t1 --seed 12", fail.text)
        self.assertIn("ERROR @ 5", cases[1].find("system-out").text)
        self.assertEqual(cases[2].find("error").get("type"), "timeout")
        self.assertEqual(cases[3].find("skipped").get("message"), "not run: budget")
        # the properties come first, as the JUnit schemas want them
        self.assertEqual([c.tag for c in suites[0]], ["properties", "testcase"])
        self.assertEqual([c.tag for c in cases[1]], ["failure", "system-out"])

    def test_junit_names_do_not_carry_the_seed(self):
        a = results()
        b = results()
        for i, r in enumerate(b["runs"]):       # another night: other seeds
            r["seed"] = 1000003 + i
        b["master_seed"] = 5
        ja, jb = self.write_junit(a), self.write_junit(b)

        def names(root):
            return [(s.get("name"), s.find("testcase").get("classname"), s.find("testcase").get("name"))
                    for s in root.findall("testsuite")]
        self.assertEqual(names(ja), names(jb))
        for root in (ja, jb):
            n = names(root)
            self.assertEqual(len({(c, t) for _, c, t in n}), len(n))   # each run its own name
            for r, (suite, cls, name) in zip(b["runs"] if root is jb else a["runs"], n):
                self.assertNotIn(str(r["seed"]), suite + cls + name)
        seeds = [{p.get("name"): p.get("value") for p in s.find("properties")}["seed"] for s in jb.findall("testsuite")]
        self.assertEqual(seeds, [str(1000003 + i) for i in range(4)])

    def test_markdown_and_html(self):
        doc = report.build_document(results())
        md = report.render_md(doc)
        self.assertIn("# Regression smoke", md)
        self.assertIn("| result | FAILED |", md)
        self.assertIn("| runs | 4: 1 passed, 2 failed, 1 skipped |", md)
        self.assertIn("| tests | 2: 0 passed, 2 failed, 0 not run |", md)
        self.assertIn("| testpoints | 1: 0 passing, 1 not passing, 0 covered |", md)
        self.assertIn("### Bucket 1: 1 failure in t1\n\n`ERROR env.sb [SB] byte # <bad> & | wrong`", md)
        self.assertIn("| t1#2 | t1 | 12 | fast | fail | 2.0 | ERROR @ 5: env.sb [SB] byte 3 &lt;bad&gt; &amp; \\| wrong "
                      "| [`logs/t1-12.log`](<logs/t1-12.log>) | [`waves/t1-12.fst`](<waves/t1-12.fst>) |", md)
        self.assertIn("| t2#2 | t2 | 14 | fast | skipped | 0.0 | not run: budget | [`logs/t2-14.log`](<logs/t2-14.log>) |  |", md)
        self.assertIn("`prog --test t1 --seed 12`", md)
        self.assertIn("Debug rerun of t1 seed 12: failed again, same bucket", md)
        self.assertIn("Rerun: waves [`waves/t1-12.fst`](<waves/t1-12.fst>), log [`logs/rerun-t1-12.log`]"
                      "(<logs/rerun-t1-12.log>)", md)
        # reasons in the tests table, and its totals
        self.assertIn("| t1 | 2 | 1 | 1 | 0 | FAIL | seed 12: ERROR @ 5: env.sb [SB] byte 3 &lt;bad&gt; &amp; \\| wrong |", md)
        self.assertIn("| t2 | 2 | 0 | 1 | 1 | FAIL | seed 13: RUNNER [TIMEOUT] x |", md)
        self.assertIn("| total | 4 | 1 | 2 | 1 | 0 pass, 2 FAIL, 0 not run |  |", md)
        self.assertIn("| toggle coverage (rtl/) | 50.0% (5/10) |", md)
        self.assertIn("| rtl/a.sv | 3/4 | 75.0% (3/4) | 5/10 | 50.0% (5/10) |", md)
        self.assertIn("| cg_wr | 1 | 2 | 50.0% (1/2) | op:read | t1 1 |", md)
        self.assertIn("| tp1 | V1 | yes | NO: failed: 2/3 runs (t1, t2) | NO | t1, t2 | 2/4 runs passed; t1 1/2, t2 0/1; "
                      "cg_wr 50.0% (bins hit by 1 tests) |", md)
        self.assertIn("| total | 1 | 1 | 0 | 0 |", md)
        self.assertIn("| stopped early | budget of 1 min spent |", md)
        self.assertIn("Note: genhtml failed", md)
        self.assertIn("3 coverage files merged into [`coverage/merged.dat`](<coverage/merged.dat>); "
                      "HTML: [`coverage/html/index.html`](<coverage/html/index.html>)", md)
        html = report.render_html(doc, "t")
        self.assertIn("&lt;bad&gt; &amp;", html)
        self.assertNotIn("<bad>", html)
        self.assertIn('<td class="bad">FAIL</td>', html)
        self.assertIn('<td class="bad">NO: failed: 2/3 runs (t1, t2)</td>', html)
        self.assertIn('<a href="logs/t1-12.log"><code>logs/t1-12.log</code></a>', html)
        self.assertIn('<a href="waves/t1-12.fst"><code>waves/t1-12.fst</code></a>', html)
        self.assertIn('<a href="coverage/html/index.html"><code>coverage report (HTML)</code></a>', html)
        self.assertIn('<a href="coverage/bins.md"><code>coverage/bins.md</code></a>', html)
        self.assertIn('<a href="junit.xml"><code>junit.xml</code></a>', html)
        self.assertIn('<h2 id="failure-buckets">Failure buckets</h2>', html)
        self.assertIn('<h2 id="testplan">Testplan</h2>', html)
        self.assertIn("<th>skipped</th>", html)          # headers carry no status colour
        self.assertTrue(html.rstrip().endswith("</html>"))

    def test_verdict_and_no_coverage_section(self):
        res = results()
        res["coverage_enabled"], res["coverage"] = False, None
        for r in res["runs"]:
            if r["status"] != "skipped":
                r["status"], r["message"] = "pass", ""
        res["counts"].update(failed=0, fail=0, timeout=0, passed=3, pass_=3)
        res["buckets"] = []
        res["tests"] = [{"test": "t1", "runs": 2, "passed": 2, "failed": 0, "skipped": 0},
                        {"test": "t2", "runs": 2, "passed": 1, "failed": 0, "skipped": 1}]
        md = report.render_md(report.build_document(res))
        self.assertIn("| result | INCOMPLETE |", md)
        self.assertIn("| t2 | 2 | 1 | 0 | 1 | pass (part) | 1 of 2 runs skipped: not run: budget |", md)
        self.assertIn("## Coverage\n\nNot collected: this run used the fast build", md)
        self.assertEqual(report.verdict({"failed": 0, "skipped": 0, "total": 0}), "NO RUNS")
        self.assertEqual(report.verdict({"failed": 0, "skipped": 0, "total": 3}), "PASSED")
        self.assertEqual(report.verdict({"failed": 1, "skipped": 1, "total": 3}), "FAILED")


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
