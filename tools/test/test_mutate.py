"""Mutant application, tree mirroring, file-list rewriting and the check of the project's
mutants (regresslib.mutate)."""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import common
from regresslib import ToolError, config, mutate


def mutant(find, replace="X", file="rtl/a.sv", name="m"):
    return config.Mutant(name, "comparison", file, find, replace)


class Apply(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        os.makedirs(os.path.join(self.root, "rtl"))
        with open(os.path.join(self.root, "rtl", "a.sv"), "w") as f:
            f.write("module a;\n  assign y = a < b;\n  assign z = c < d;\nendmodule\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_unique_find(self):
        m = mutant("a < b", "a <= b")
        text, off = mutate.locate(m, self.root)
        self.assertEqual(mutate.line_of(text, off), 2)
        self.assertEqual(mutate.mutated_text(m, self.root),
                         "module a;\n  assign y = a <= b;\n  assign z = c < d;\nendmodule\n")

    def test_find_must_occur_once(self):
        with self.assertRaisesRegex(ToolError, "occurs 2 times in rtl/a.sv"):
            mutate.locate(mutant(" < "), self.root)
        with self.assertRaisesRegex(ToolError, "occurs 0 times"):
            mutate.locate(mutant("a > b"), self.root)
        with self.assertRaisesRegex(ToolError, "does not exist"):
            mutate.locate(mutant("a", file="rtl/b.sv"), self.root)

    def test_check_reports_all_problems_and_line_drift(self):
        ms = [mutant("a < b", name="ok"), mutant(" < ", name="twice"), mutant("zz", name="none"),
              config.Mutant("drift", "comparison", "rtl/a.sv", "c < d", "c > d", line=40)]
        errors, warnings = mutate.check(ms, self.root)
        self.assertEqual(len(errors), 2)
        self.assertIn("'twice'", errors[0])
        self.assertIn("'none'", errors[1])
        self.assertEqual(warnings, ["mutant 'drift': line hint 40, but 'find' is at rtl/a.sv:3"])


class Tree(unittest.TestCase):
    def test_sync_rewrites_only_changed_files(self):
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "src"), os.path.join(d, "dst")
            os.makedirs(os.path.join(src, "lib"))
            for rel, text in (("a.sv", "A"), ("b.sv", "B"), ("lib/c.sv", "C")):
                with open(os.path.join(src, rel), "w") as f:
                    f.write(text)
            mutate.sync_tree(src, dst)
            os.makedirs(os.path.join(dst, "old"))
            with open(os.path.join(dst, "old", "stale.sv"), "w") as f:
                f.write("S")
            past = time.time() - 1000
            for rel in ("a.sv", "b.sv", "lib/c.sv"):
                os.utime(os.path.join(dst, rel), (past, past))
            mutate.sync_tree(src, dst, {"a.sv": "A2"})
            mt = {rel: os.path.getmtime(os.path.join(dst, rel)) for rel in ("a.sv", "b.sv", "lib/c.sv")}
            self.assertGreater(mt["a.sv"], past + 500)             # mutated: rewritten
            self.assertEqual((mt["b.sv"], mt["lib/c.sv"]), (past, past))   # untouched
            self.assertFalse(os.path.exists(os.path.join(dst, "old", "stale.sv")))
            with open(os.path.join(dst, "a.sv")) as f:
                self.assertEqual(f.read(), "A2")
            # restoring the original is a change too: its mtime must move forward (the build
            # would otherwise keep the mutant's model)
            os.utime(os.path.join(dst, "a.sv"), (past, past))
            mutate.sync_tree(src, dst)
            self.assertGreater(os.path.getmtime(os.path.join(dst, "a.sv")), past + 500)
            with open(os.path.join(dst, "a.sv")) as f:
                self.assertEqual(f.read(), "A")

    def test_filelist(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "core.f")
            with open(src, "w") as f:
                f.write("// sources\nrtl/lint.vlt\n+incdir+rtl/inc\n-Wno-FOO\nrtl/a.sv\n\nrtl/lib/b.sv\n"
                        "sim/c.sv\n/abs/d.sv\n")
            dst = os.path.join(d, "out.f")
            mutate.write_filelist(src, dst, "/m", root="/repo")
            with open(dst) as f:
                lines = f.read().splitlines()
            self.assertTrue(lines[0].startswith("// srnic_core sources of a mutant"))
            self.assertEqual(lines[1:], ["// sources", "/repo/rtl/lint.vlt", "-I/m/rtl/inc", "-Wno-FOO",
                                         "/m/rtl/a.sv", "", "/m/rtl/lib/b.sv", "/repo/sim/c.sv", "/abs/d.sv"])


class ProjectMutants(unittest.TestCase):
    def test_every_mutant_applies(self):
        ms = config.load_mutations(os.path.join(common.ROOT, "verif", "mutations.toml"))
        errors, warnings = mutate.check(ms)
        self.assertEqual(errors, [])
        self.assertEqual(warnings, [])
        self.assertGreaterEqual(len({m.cls for m in ms}), 6)

    def test_cli_check_and_list(self):
        tool = os.path.join(common.TOOLS, "mutate")
        p = subprocess.run([sys.executable, tool, "--check"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"mutate --check: (\d+)/\1 mutants apply")
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "m.toml")
            with open(bad, "w") as f:
                f.write('[[mutant]]\nname = "x"\nclass = "comparison"\nfile = "rtl/srnic_core.sv"\n'
                        'find = "no such text anywhere"\nreplace = "y"\n')
            p = subprocess.run([sys.executable, tool, "--check", "--mutations", bad], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn("'find' occurs 0 times in rtl/srnic_core.sv", p.stdout)
            p = subprocess.run([sys.executable, tool, "--only", "nope", "--mutations", bad],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2)
            self.assertIn("unknown mutant 'nope'", p.stderr)


def tree_contains(top, marker):
    for dp, _, fns in os.walk(top):
        for fn in fns:
            with open(os.path.join(dp, fn)) as f:
                if marker in f.read():
                    return True
    return False


class Flow(unittest.TestCase):
    """The whole mutation flow with the CMake steps replaced: the 'build' fails when the mirrored
    RTL holds BREAKBUILD, and the stand-in test program fails when it holds KILLME."""

    def setUp(self):
        self.saved = (mutate.configure, mutate.build_program, os.environ.get("FAKE_UVM_MIRROR"))

        def fake_build(opts, log):
            broken = tree_contains(os.path.join(opts.out, "rtl"), "BREAKBUILD")
            with open(log, "a") as f:
                f.write("%Error: rtl/srnic_qpc_ram.sv:1: syntax error, BREAKBUILD\n" if broken else "ok\n")
            return not broken
        mutate.configure = lambda *a: None
        mutate.build_program = fake_build

    def tearDown(self):
        mutate.configure, mutate.build_program, mirror = self.saved
        if mirror is None:
            os.environ.pop("FAKE_UVM_MIRROR", None)
        else:
            os.environ["FAKE_UVM_MIRROR"] = mirror

    def test_killed_survived_and_killed_by_build(self):
        with tempfile.TemporaryDirectory() as d:
            out, bdir = os.path.join(d, "out"), os.path.join(d, "build")
            os.makedirs(os.path.join(bdir, "bin"))
            shutil.copy(common.FAKE, os.path.join(bdir, "bin", "prog"))
            regs = os.path.join(d, "r.toml")
            with open(regs, "w") as f:
                f.write('[mini]\nruns = [{ test = "good", seeds = 2 }]\n')
            muts = os.path.join(d, "m.toml")
            with open(muts, "w") as f:
                f.write('''[[mutant]]
name = "kill"
class = "dropped_assignment"
file = "rtl/srnic_sched.sv"
find = "if (active) new_pending = 1'b1;"
replace = "if (active) new_pending = 1'b0; // KILLME"
[[mutant]]
name = "survive"
class = "inverted_logic"
file = "rtl/srnic_sched.sv"
find = "assign db_overflow = db_valid && !dbq_in_ready;"
replace = "assign db_overflow = db_valid & !dbq_in_ready;"
desc = "equivalent"
[[mutant]]
name = "nobuild"
class = "wrong_constant"
file = "rtl/srnic_qpc_ram.sv"
find = "localparam int AW = $clog2(NUM_QPS);"
replace = "localparam int AW = $clog2(NUM_QPS); BREAKBUILD"
''')
            os.environ["FAKE_UVM_MIRROR"] = os.path.join(out, "rtl")
            argv = ["--mutations", muts, "--regressions-file", regs, "--regression", "mini", "--out", out,
                    "--build-dir", bdir, "--prog-fast", "bin/prog", "--seed", "3"]
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv)
            text = buf.getvalue()
            self.assertEqual(rc, 0, text)
            self.assertIn("baseline passes (2 runs", text)
            self.assertEqual(text.splitlines()[-1], "kill rate: 2/3 (66.7%)")
            with open(os.path.join(out, "mutate.json")) as f:
                res = {r["name"]: r for r in json.load(f)["results"]}
            self.assertEqual(res["kill"]["result"], "killed")
            self.assertEqual(res["kill"]["by"], "ERROR env.sb [SB_MISMATCH] mutant noticed at byte #")
            with open(os.path.join(common.ROOT, "rtl", "srnic_sched.sv")) as f:
                sched = f.read()
            kill_line = 1 + sched.split("if (active) new_pending = 1'b1;")[0].count("\n")
            survive_line = 1 + sched.split("assign db_overflow = db_valid && !dbq_in_ready;")[0].count("\n")
            self.assertEqual((res["kill"]["test"], res["kill"]["line"]), ("good", kill_line))
            self.assertEqual((res["survive"]["result"], res["survive"]["runs"]), ("survived", 2))
            self.assertEqual(res["nobuild"]["result"], "killed_build")
            self.assertIn("BREAKBUILD", res["nobuild"]["by"])
            with open(os.path.join(out, "mutate.md")) as f:
                md = f.read()
            self.assertIn("| kill rate | 2/3 (66.7%) |", md)
            self.assertIn(f"| survive | inverted_logic | rtl/srnic_sched.sv:{survive_line} | SURVIVED |", md)
            self.assertIn("+ assign db_overflow = db_valid & !dbq_in_ready;", md)
            # the mirror ends unmutated, the repository's rtl/ was never touched
            for dp, _, fns in os.walk(os.path.join(out, "rtl")):
                for fn in fns:
                    rel = os.path.relpath(os.path.join(dp, fn), os.path.join(out, "rtl"))
                    with open(os.path.join(dp, fn)) as a, open(os.path.join(common.ROOT, "rtl", rel)) as b:
                        self.assertEqual(a.read(), b.read(), rel)
            with open(os.path.join(out, "srnic_core.f")) as f:
                flist = f.read()
            self.assertIn(os.path.join(out, "rtl", "srnic_sched.sv"), flist)
            # a required kill rate above what was reached fails
            with contextlib.redirect_stdout(io.StringIO()):
                rc = mutate.main(argv + ["--only", "survive", "--no-baseline", "--require-kill-rate", "50"])
            self.assertEqual(rc, 1)


if __name__ == "__main__":
    unittest.main()
