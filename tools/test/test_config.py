"""Loading and validation of regressions.toml, testplan.toml and mutations.toml
(regresslib.config), including the project's own files."""
import os
import tempfile
import tomllib
import unittest

import common
from regresslib import ToolError, config


def regs(text):
    return config.parse_regressions(tomllib.loads(text), "r.toml")


class Regressions(unittest.TestCase):
    def test_defaults_and_overrides(self):
        r = regs('''[smoke]
runs = [{ test = "a" }, { test = "b", seeds = [3, 9], timeout = 5, build = "debug", args = ["+x=1"] }]
[cov]
build = "coverage"
timeout = 20
runs = [{ test = "a", seeds = 4 }]''')
        s = r["smoke"]
        self.assertEqual((s.build, s.coverage, s.timeout), ("fast", False, 600.0))
        self.assertEqual((s.runs[0].test, s.runs[0].seeds, s.runs[0].build), ("a", 1, "fast"))
        self.assertEqual((s.runs[1].seeds, s.runs[1].timeout, s.runs[1].build, s.runs[1].args),
                         ([3, 9], 5.0, "debug", ["+x=1"]))
        c = r["cov"]
        self.assertEqual((c.coverage, c.timeout, c.runs[0].timeout, c.runs[0].seeds), (True, 20.0, 20.0, 4))

    def assertError(self, text, *fragments):
        with self.assertRaises(ToolError) as cm:
            regs(text)
        for f in fragments:
            self.assertIn(f, str(cm.exception))

    def test_errors(self):
        self.assertError('[s]\nruns = []', "r.toml", "regression 's'", "non-empty list")
        self.assertError('[s]\nrun = [{test="a"}]', "missing key 'runs'")
        self.assertError('[s]\nruns = [{test="a"}]\nbuidl = "fast"', "unknown key 'buidl'")
        self.assertError('[s]\nruns = [{test="a", seed=3}]', "runs[0]", "unknown key 'seed'")
        self.assertError('[s]\nruns = [{test="a", seeds=0}]', "'seeds' must be")
        self.assertError('[s]\nruns = [{test="a", seeds=[]}]', "'seeds' must be")
        self.assertError('[s]\nruns = [{test="a", seeds=[1, -2]}]', "'seeds' must be")
        self.assertError('[s]\nruns = [{test="a", seeds=true}]', "'seeds' must be")
        self.assertError('[s]\nruns = [{test=""}]', "'test' must be a non-empty string")
        self.assertError('[s]\nbuild = "slow"\nruns = [{test="a"}]', "'build' must be one of fast, coverage, debug")
        self.assertError('[s]\ncoverage = true\nruns = [{test="a"}]', "coverage = true needs build")
        self.assertError('[s]\ntimeout = -1\nruns = [{test="a"}]', "'timeout' must be a positive number")
        self.assertError('[s]\nruns = [{test="a", args="+x=1"}]', "'args' must be a list")
        self.assertError('', "no regression defined")

    def test_syntax_error_and_missing_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "bad.toml")
            with open(p, "w") as f:
                f.write("[s\nruns=1")
            with self.assertRaises(ToolError) as cm:
                config.load_regressions(p)
            self.assertIn("TOML syntax error", str(cm.exception))
            with self.assertRaises(ToolError) as cm:
                config.load_regressions(os.path.join(d, "none.toml"))
            self.assertIn("file not found", str(cm.exception))


class Testplan(unittest.TestCase):
    def parse(self, text):
        return config.parse_testplan(tomllib.loads(text), "tp.toml")

    def test_ok(self):
        tps = self.parse('''[[testpoint]]
name = "a"
stage = "V1"
desc = "d"
tests = ["t1", "t2"]
covergroups = ["cg"]
[[testpoint]]
name = "b"
stage = "V3"
desc = "d"
tests = ["t3"]''')
        self.assertEqual([(t.name, t.stage, t.tests, t.covergroups) for t in tps],
                         [("a", "V1", ["t1", "t2"], ["cg"]), ("b", "V3", ["t3"], [])])

    def test_errors(self):
        base = 'name = "a"\nstage = "V1"\ndesc = "d"\ntests = ["t"]\n'
        cases = [
            ('[[testpoint]]\n' + base + '[[testpoint]]\n' + base, "testpoint 'a': defined twice"),
            ('[[testpoint]]\n' + base.replace('"V1"', '"V4"'), "'stage' must be one of V1, V2, V3"),
            ('[[testpoint]]\n' + base.replace('["t"]', '[]'), "'tests' must not be empty"),
            ('[[testpoint]]\n' + base.replace('["t"]', '["t", "t"]'), "lists a name twice"),
            ('[[testpoint]]\n' + base + 'covergroups = "cg"\n', "'covergroups' must be a list"),
            ('[[testpoint]]\n' + base + 'owner = "x"\n', "unknown key 'owner'"),
            ('[[testpoint]]\nname = "a"\n', "missing key"),
            ('[x]\n', "missing key 'testpoint'"),
        ]
        for text, frag in cases:
            with self.assertRaises(ToolError, msg=frag) as cm:
                self.parse(text)
            self.assertIn(frag, str(cm.exception))


class Mutations(unittest.TestCase):
    def parse(self, text):
        return config.parse_mutations(tomllib.loads(text), "m.toml")

    def test_errors(self):
        base = 'name = "m"\nclass = "comparison"\nfile = "rtl/x.sv"\nfind = "a < b"\nreplace = "a <= b"\n'
        self.assertEqual(self.parse('[[mutant]]\n' + base + 'line = 4\n')[0].line, 4)
        cases = [
            (base.replace("comparison", "typo"), "'class' must be one of"),
            (base.replace("rtl/x.sv", "sim/x.cpp"), "below rtl/"),
            (base.replace("rtl/x.sv", "rtl/../x.sv"), "below rtl/"),
            (base.replace('"a <= b"', '"a < b"'), "changes nothing"),
            (base.replace('"m"', '"m m"'), "name may only hold"),
            (base + 'line = -3\n', "'line' must be a line number"),
            (base.replace('find = "a < b"\n', ''), "missing key 'find'"),
        ]
        for text, frag in cases:
            with self.assertRaises(ToolError, msg=frag) as cm:
                self.parse('[[mutant]]\n' + text)
            self.assertIn(frag, str(cm.exception))
        with self.assertRaises(ToolError) as cm:
            self.parse('[[mutant]]\n' + base + '[[mutant]]\n' + base)
        self.assertIn("defined twice", str(cm.exception))


class ProjectFiles(unittest.TestCase):
    """The project's own files load, and agree with each other."""

    def test_load(self):
        r = config.load_regressions(os.path.join(common.ROOT, "verif", "regressions.toml"))
        for name in ("smoke", "nightly", "coverage"):
            self.assertIn(name, r)
        self.assertEqual((r["smoke"].build, r["smoke"].coverage), ("fast", False))
        self.assertTrue(r["nightly"].coverage and r["coverage"].coverage)
        tps = config.load_testplan(os.path.join(common.ROOT, "verif", "testplan.toml"))
        planned = {t for tp in tps for t in tp.tests}
        in_regressions = {s.test for reg in r.values() for s in reg.runs}
        self.assertEqual(planned - in_regressions, set(), "testplan tests missing from every regression")
        self.assertEqual(in_regressions - planned, set(), "regression tests not in the testplan")
        ms = config.load_mutations(os.path.join(common.ROOT, "verif", "mutations.toml"))
        self.assertGreaterEqual(len(ms), 20)


if __name__ == "__main__":
    unittest.main()
