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


class BuildLog(unittest.TestCase):
    def test_first_build_error(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "build.log")
            # Verilator's message first, not ninja's FAILED line before it
            with open(log, "w") as f:
                f.write("$ cmake --build b --target x\nFAILED: verif/blocks/x.dir/Vsrnic_timer.cpp ...\n"
                        "%Warning-UNUSEDSIGNAL: rtl/transport/srnic_timer.sv:198:22: Signal is not used: 'fwd_q'\n"
                        "%Error: Exiting due to 1 warning(s)\n"
                        "ninja: error: rebuilding 'build.ninja': subcommand failed\n")
            self.assertEqual(mutate.first_build_error(log),
                             "%Warning-UNUSEDSIGNAL: rtl/transport/srnic_timer.sv:198:22: Signal is not used: 'fwd_q'")
            with open(log, "w") as f:
                f.write("FAILED: x.o\nx.cpp:3:1: error: expected ';'\n")
            self.assertEqual(mutate.first_build_error(log), "x.cpp:3:1: error: expected ';'")
            self.assertEqual(mutate.first_build_error(os.path.join(d, "missing.log")), "build failed")


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

    def test_every_rtl_file_has_mutants(self):
        ms = config.load_mutations(os.path.join(common.ROOT, "verif", "mutations.toml"))
        self.assertEqual(mutate.uncovered_files(ms), [])

    def test_cli_check_and_list(self):
        tool = os.path.join(common.TOOLS, "mutate")
        p = subprocess.run([sys.executable, tool, "--check"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"mutate --check: (\d+)/\1 mutants apply")
        self.assertRegex(p.stdout, r"mutate --check: (\d+)/\1 RTL files under rtl/ have mutants")
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "m.toml")
            with open(bad, "w") as f:
                f.write('[[mutant]]\nname = "x"\nclass = "comparison"\nfile = "rtl/srnic_core.sv"\n'
                        'find = "no such text anywhere"\nreplace = "y"\n')
            p = subprocess.run([sys.executable, tool, "--check", "--mutations", bad], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1)
            self.assertIn("'find' occurs 0 times in rtl/srnic_core.sv", p.stdout)
            # files without a mutant fail the check too, unless a selection is checked
            self.assertIn("mutate: error: rtl/transport/srnic_timer.sv has no mutant", p.stdout)
            self.assertNotIn("rtl/srnic_core.sv has no mutant", p.stdout)
            with open(bad, "w") as f:
                f.write('[[mutant]]\nname = "x"\nclass = "comparison"\nfile = "rtl/srnic_core.sv"\n'
                        'find = "module srnic_core"\nreplace = "module srnic_core "\n')
            p = subprocess.run([sys.executable, tool, "--check", "--mutations", bad], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn("rtl/transport/srnic_timer.sv has no mutant", p.stdout)
            p = subprocess.run([sys.executable, tool, "--check", "--only", "x", "--mutations", bad],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
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


class TestSelection(unittest.TestCase):
    def test_filelist_sources_and_manifest(self):
        with tempfile.TemporaryDirectory() as d:
            tree = os.path.join(d, "out")
            blk = os.path.join(d, "blk.f")
            with open(blk, "w") as f:
                f.write("// bench\nrtl/lint.vlt\nrtl/lib/sync_fifo.sv\n-Wno-X\n+incdir+rtl\nrtl/dma/srnic_sched.sv\n")
            core = os.path.join(d, "core.f")
            with open(core, "w") as f:
                f.write(f"/repo/rtl/lint.vlt\n{tree}/rtl/pkg/srnic_pkg.sv\n{tree}/rtl/lib/sdp_ram.sv\n/else/x.sv\n")
            self.assertEqual(mutate.filelist_sources(blk, tree, "/repo"),
                             {"rtl/lib/sync_fifo.sv", "rtl/dma/srnic_sched.sv"})
            self.assertEqual(mutate.filelist_sources(core, tree, "/repo"),
                             {"rtl/pkg/srnic_pkg.sv", "rtl/lib/sdp_ram.sv"})
            with open(os.path.join(d, mutate.RTL_TESTS), "w") as f:
                f.write(f"# header\nblock_sched\t{blk}\tblock_sched\nfullchip_pcap\t{core}\tsrnic-sim,roce-pcap-check\n")
            tests = mutate.load_rtl_tests(d, tree, "/repo")
            self.assertEqual([(t.name, t.kind, t.targets) for t in tests],
                             [("block_sched", "block", ["block_sched"]),
                              ("fullchip_pcap", "chip", ["srnic-sim", "roce-pcap-check"])])
            self.assertEqual([t.name for t in mutate.tests_for("rtl/pkg/srnic_pkg.sv", tests)], ["fullchip_pcap"])
            with self.assertRaisesRegex(ToolError, "does not exist"):
                mutate.load_rtl_tests(tree, tree)

    def test_order_cheapest_first(self):
        t = [mutate.RtlTest("regress:smoke", [], ["srnic-uvm"], "regress"),
             mutate.RtlTest("fullchip_b", [], ["b"], "chip"),
             mutate.RtlTest("block_slow", [], ["x"], "block"),
             mutate.RtlTest("block_fast", [], ["y"], "block"),
             mutate.RtlTest("fullchip_a", [], ["a"], "chip")]
        times = {"regress:smoke": 7.0, "fullchip_b": 30.0, "fullchip_a": 90.0, "block_slow": 5.0, "block_fast": 0.5}
        self.assertEqual([x.name for x in mutate.order_tests(t, times)],
                         ["block_fast", "block_slow", "regress:smoke", "fullchip_b", "fullchip_a"])
        # without measured times: blocks first, then by name
        self.assertEqual([x.name for x in mutate.order_tests(t, {})],
                         ["block_fast", "block_slow", "fullchip_a", "fullchip_b", "regress:smoke"])

    def test_first_test_error(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "t.log")
            with open(log, "w") as f:
                f.write("$ ctest --test-dir b -R ^block_x$\nTest project /b\n"
                        "[ RUN      ] BadInput.BadRkeyIsNakedAsRemoteAccessError\n"
                        "/src/t.cpp:12: Failure\nValue of: ok\n1/1 Test #3: block_x ...***Failed\n")
            self.assertEqual(mutate.first_test_error(log), "/src/t.cpp:12: Failure")
            # a passing test whose name holds a failure word is not the failure
            with open(log, "w") as f:
                f.write("[ RUN      ] TimerBench.StopCfgAndTimeoutZeroCancel\n"
                        "[       OK ] TimerBench.StopCfgAndTimeoutZeroCancel (0 ms)\n"
                        "[ RUN      ] TimerBench.DurationsOfAllCodes\n/src/timer_test.cpp:211: Failure\n")
            self.assertEqual(mutate.first_test_error(log), "/src/timer_test.cpp:211: Failure")

    def test_per_file(self):
        ms = [mutant("a", name="m1", file="rtl/a.sv"), mutant("b", name="m2", file="rtl/a.sv"),
              mutant("c", name="m3", file="rtl/lib/b.sv"), mutant("d", name="m4", file="rtl/lib/b.sv")]
        res = [{"name": "m1", "result": "killed"}, {"name": "m2", "result": "survived"},
               {"name": "m3", "result": "stillborn"}, {"name": "m4", "result": "error"}]
        # (mutants, killed, scored, stillborn): a stillborn mutant is neither killed nor scored
        self.assertEqual(mutate.per_file(res, ms, ["rtl/c.sv"]),
                         {"rtl/a.sv": (2, 1, 2, 0), "rtl/c.sv": (0, 0, 0, 0), "rtl/lib/b.sv": (2, 0, 0, 1)})
        self.assertEqual(mutate.kill_stats(res), (1, 2))
        self.assertEqual(mutate.counts(res), {"killed": 1, "survived": 1, "stillborn": 1, "error": 1})
        self.assertEqual(mutate.score_line(mutate.counts(res)),
                         "score: 1 killed, 1 survived, 1 stillborn (build failed, not scored), 1 errors")

    def test_uncovered_files(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "rtl", "lib"))
            for rel in ("rtl/a.sv", "rtl/lib/b.sv", "rtl/lib/c.sv", "rtl/core.f", "rtl/lint.vlt"):
                with open(os.path.join(d, rel), "w") as f:
                    f.write("x\n")
            ms = [mutant("x", file="rtl/a.sv"), mutant("x", name="n", file="rtl/lib/c.sv")]
            self.assertEqual(mutate.uncovered_files(ms, d), ["rtl/lib/b.sv"])
            self.assertEqual(mutate.uncovered_files(ms + [mutant("x", name="o", file="rtl/lib/b.sv")], d), [])


MUTANTS = '''[[mutant]]
name = "kill"
class = "dropped_assignment"
file = "rtl/dma/srnic_sched.sv"
find = "if (active) new_pending = 1'b1;"
replace = "if (active) new_pending = 1'b0; // KILLME"
[[mutant]]
name = "blockkill"
class = "dropped_check"
file = "rtl/dma/srnic_sched.sv"
find = "push = done_more || pending;"
replace = "push = done_more; // BLOCKKILL CHIPKILL"
[[mutant]]
name = "survive"
class = "inverted_logic"
file = "rtl/dma/srnic_sched.sv"
find = "assign db_overflow = db_valid && !dbq_in_ready;"
replace = "assign db_overflow = db_valid & !dbq_in_ready;"
desc = "equivalent"
[[mutant]]
name = "nobuild"
class = "wrong_constant"
file = "rtl/qpc/srnic_qpc_ram.sv"
find = "localparam int AW = $clog2(NUM_QPS);"
replace = "localparam int AW = $clog2(NUM_QPS); BREAKBUILD"
'''


class Flow(unittest.TestCase):
    """The whole mutation flow with the CMake steps replaced: the 'build' fails when the mirrored
    RTL holds BREAKBUILD; the stand-in block bench (of srnic_sched.sv) fails when it holds
    BLOCKKILL, the stand-in chip test when it holds CHIPKILL, and the stand-in test program of
    the regression when it holds KILLME."""

    def setUp(self):
        self.saved = (mutate.configure, mutate.build_targets, mutate.run_ctest,
                      os.environ.get("FAKE_UVM_MIRROR"))
        self.calls = []

        def fake_configure(build_dir, flist, rtl_dir, log):
            blk = os.path.join(build_dir, "sched.f")
            with open(blk, "w") as f:
                f.write("rtl/lib/sync_fifo.sv\nrtl/dma/srnic_sched.sv\n")
            with open(os.path.join(build_dir, mutate.RTL_TESTS), "w") as f:
                f.write(f"block_sched\t{blk}\tblock_sched\nfullchip_x\t{flist}\tfullchip_x\n")

        self.dir_broken = False

        def fake_build(opts, targets, log):
            # BREAKDIR: the build directory itself breaks (every later build fails)
            self.dir_broken = self.dir_broken or tree_contains(os.path.join(opts.out, "rtl"), "BREAKDIR")
            broken = self.dir_broken or tree_contains(os.path.join(opts.out, "rtl"), "BREAKBUILD")
            with open(log, "a") as f:
                f.write("%Error: rtl/qpc/srnic_qpc_ram.sv:1: syntax error, BREAKBUILD\n" if broken else "ok\n")
            return not broken

        def fake_ctest(opts, test, seed, log):
            self.calls.append(test.name)
            marker = "BLOCKKILL" if test.kind == "block" else "CHIPKILL"
            if tree_contains(os.path.join(opts.out, "rtl"), marker):
                return False, f"Failure: {test.name} noticed {marker}"
            return True, ""
        mutate.configure = fake_configure
        mutate.build_targets = fake_build
        mutate.run_ctest = fake_ctest

    def tearDown(self):
        mutate.configure, mutate.build_targets, mutate.run_ctest, mirror = self.saved
        if mirror is None:
            os.environ.pop("FAKE_UVM_MIRROR", None)
        else:
            os.environ["FAKE_UVM_MIRROR"] = mirror

    def mini(self, d, seeds=2, mutants=MUTANTS):
        """A mini project in d: the stand-in program, a one-test regression and the mutants.
        Returns (out, argv) with the arguments every run of it shares."""
        out, bdir = os.path.join(d, "out"), os.path.join(d, "build")
        os.makedirs(os.path.join(bdir, "bin"))
        shutil.copy(common.FAKE, os.path.join(bdir, "bin", "prog"))
        regs = os.path.join(d, "r.toml")
        with open(regs, "w") as f:
            f.write(f'[mini]\nruns = [{{ test = "good", seeds = {seeds} }}]\n')
        muts = os.path.join(d, "m.toml")
        with open(muts, "w") as f:
            f.write(mutants)
        os.environ["FAKE_UVM_MIRROR"] = os.path.join(out, "rtl")
        return out, ["--mutations", muts, "--regressions-file", regs, "--regression", "mini", "--out", out,
                     "--build-dir", bdir, "--prog-fast", "bin/prog", "--seed", "3"]

    def test_killed_survived_and_stillborn(self):
        with tempfile.TemporaryDirectory() as d:
            out, argv = self.mini(d)
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv)
            text = buf.getvalue()
            self.assertEqual(rc, 0, text)
            self.assertIn("baseline passes (3 tests, 2 regression runs", text)
            # the mutant whose build fails is stillborn: neither killed nor in the kill rate
            self.assertEqual(text.splitlines()[-1], "kill rate: 2/3 (66.7%)")
            self.assertIn("score: 2 killed, 1 survived, 1 stillborn (build failed, not scored), 0 errors", text)
            self.assertIn("stillborn (a build rejected them; not scored): nobuild", text)
            self.assertIn("] nobuild: stillborn: build (fullchip_x) failed (%Error: rtl/qpc/srnic_qpc_ram.sv:1: ", text)
            self.assertRegex(text, r"rtl/dma/srnic_sched\.sv\s+3\s+2\s+0\s+66\.7%")
            self.assertRegex(text, r"rtl/qpc/srnic_qpc_ram\.sv\s+1\s+0\s+1\s+-")
            self.assertRegex(text, r"rtl/nic/srnic_csr\.sv\s+0\s+0\s+0\s+-")
            self.assertIn("mutate: warning: rtl/nic/srnic_csr.sv has no mutant", text)
            with open(os.path.join(out, "mutate.json")) as f:
                js = json.load(f)
            res = {r["name"]: r for r in js["results"]}
            self.assertEqual(js["files"]["rtl/dma/srnic_sched.sv"],
                             {"mutants": 3, "killed": 2, "scored": 3, "stillborn": 0})
            self.assertEqual(js["files"]["rtl/qpc/srnic_qpc_ram.sv"],
                             {"mutants": 1, "killed": 0, "scored": 0, "stillborn": 1})
            self.assertEqual(js["counts"], {"killed": 2, "survived": 1, "stillborn": 1, "error": 0})
            self.assertEqual(js["kill_rate"], {"killed": 2, "scored": 3, "pct": 66.67})
            b = js["meta"]["baseline"]
            self.assertEqual((b["ran"], b["passed"], b["tests"]),
                             (True, True, ["block_sched", "fullchip_x", "regress:mini"]))
            self.assertIn("rtl/nic/srnic_csr.sv", js["meta"]["uncovered"])
            # the regression kills "kill" after the block bench and the chip test passed
            self.assertEqual(res["kill"]["result"], "killed")
            self.assertEqual(res["kill"]["ran"], ["block_sched", "fullchip_x", "regress:mini"])
            self.assertEqual(res["kill"]["by"], "ERROR env.sb [SB_MISMATCH] mutant noticed at byte #")
            self.assertEqual(res["kill"]["test"], "regress:mini (good)")
            with open(os.path.join(common.ROOT, "rtl", "dma", "srnic_sched.sv")) as f:
                sched = f.read()
            kill_line = 1 + sched.split("if (active) new_pending = 1'b1;")[0].count("\n")
            survive_line = 1 + sched.split("assign db_overflow = db_valid && !dbq_in_ready;")[0].count("\n")
            self.assertEqual(res["kill"]["line"], kill_line)
            # cheapest first, stop at the first kill: only the block bench ran
            self.assertEqual((res["blockkill"]["result"], res["blockkill"]["test"], res["blockkill"]["ran"]),
                             ("killed", "block_sched", ["block_sched"]))
            self.assertEqual((res["survive"]["result"], res["survive"]["runs"], len(res["survive"]["ran"])),
                             ("survived", 2, 3))
            # a file without block bench: the chip test's build fails first; no test ran
            self.assertEqual(res["nobuild"]["result"], "stillborn")
            self.assertIn("BREAKBUILD", res["nobuild"]["by"])
            self.assertEqual(res["nobuild"]["test"], "build (fullchip_x)")
            self.assertEqual((res["nobuild"]["killers"], res["nobuild"]["ran"]), ([], []))
            with open(os.path.join(out, "mutate.md")) as f:
                md = f.read()
            self.assertIn("| kill rate | 2/3 (66.7%) |", md)
            self.assertIn("| killed | 2 (by a test) |", md)
            self.assertIn("| stillborn | 1 (a build rejected the mutant: not scored) |", md)
            self.assertIn("| baseline | passed: 3 tests on the unmutated RTL", md)
            self.assertIn("| rtl/dma/srnic_sched.sv | 3 | 2 | 0 | 2/3 (66.7%) |", md)
            self.assertIn("| rtl/qpc/srnic_qpc_ram.sv | 1 | 0 | 1 | - |", md)
            self.assertIn(f"| survive | inverted_logic | rtl/dma/srnic_sched.sv:{survive_line} | SURVIVED |", md)
            self.assertIn(f"| nobuild | wrong_constant | rtl/qpc/srnic_qpc_ram.sv:", md)
            self.assertIn("| stillborn (build failed) |", md)
            self.assertIn("+ assign db_overflow = db_valid & !dbq_in_ready;", md)
            self.assertIn("Tests run: block_sched, fullchip_x, regress:mini", md)
            # the mirror ends unmutated, the repository's rtl/ was never touched
            for dp, _, fns in os.walk(os.path.join(out, "rtl")):
                for fn in fns:
                    rel = os.path.relpath(os.path.join(dp, fn), os.path.join(out, "rtl"))
                    with open(os.path.join(dp, fn)) as a, open(os.path.join(common.ROOT, "rtl", rel)) as b:
                        self.assertEqual(a.read(), b.read(), rel)
            with open(os.path.join(out, "srnic_core.f")) as f:
                flist = f.read()
            self.assertIn(os.path.join(out, "rtl", "dma", "srnic_sched.sv"), flist)

            # the baseline runs the tests of the selected mutants' files only (the mutated
            # qpc_ram file has no block bench)
            self.calls.clear()
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv + ["--only", "nobuild"])
            self.assertEqual(rc, 0, buf.getvalue())
            self.assertEqual(self.calls, ["fullchip_x"])         # the baseline's; the mutant ran none
            self.assertIn("baseline passes (2 tests, 2 regression runs", buf.getvalue())
            # every mutant stillborn: nothing scored, so no kill rate meets a requirement
            self.assertEqual(buf.getvalue().splitlines()[-1], "kill rate: -")
            with contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(mutate.main(argv + ["--only", "nobuild", "--require-kill-rate", "1"]), 1)

            # --all-tests: every test of the file runs and every killer is recorded; without
            # the baseline the verdicts come out, but no kill rate
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv + ["--only", "blockkill", "--no-baseline", "--all-tests"])
            self.assertEqual(rc, 0)
            text = buf.getvalue()
            self.assertEqual(text.splitlines()[-1], "no baseline: kill rate not reported")
            self.assertNotIn("kill rate: ", text)
            self.assertIn("score: 1 killed, 0 survived, 0 stillborn", text)
            with open(os.path.join(out, "mutate.json")) as f:
                js = json.load(f)
            r = js["results"][0]
            self.assertEqual([k["test"] for k in r["killers"]], ["block_sched", "fullchip_x"])
            self.assertEqual(r["test"], "block_sched, fullchip_x")
            self.assertEqual((js["meta"]["baseline"]["ran"], js["meta"]["baseline"]["passed"]), (False, None))
            self.assertIsNone(js["kill_rate"])
            with open(os.path.join(out, "mutate.md")) as f:
                md = f.read()
            self.assertIn("| kill rate | no baseline: kill rate not reported |", md)
            self.assertIn("| baseline | not run (--no-baseline)", md)
            # a kill rate to record or to require needs the baseline
            for extra in (["--require-kill-rate", "50"], ["--history", os.path.join(d, "h.jsonl")]):
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    rc = mutate.main(argv + ["--only", "survive", "--no-baseline"] + extra)
                self.assertEqual(rc, 2, extra)
                self.assertIn("only a run with the baseline reports", err.getvalue())
            self.assertFalse(os.path.exists(os.path.join(d, "h.jsonl")))
            # --exclude leaves tests out (of the baseline too); a required kill rate above what
            # was reached fails
            self.calls.clear()
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv + ["--only", "survive", "--exclude", "^regress", "--require-kill-rate", "50"])
            self.assertEqual(rc, 1)
            self.assertEqual(buf.getvalue().splitlines()[-1], "kill rate: 0/1 (0.0%)")
            self.assertEqual(self.calls, ["block_sched", "fullchip_x"] * 2)
            with open(os.path.join(out, "mutate.json")) as f:
                self.assertEqual(json.load(f)["results"][0]["ran"], ["block_sched", "fullchip_x"])
            with open(os.path.join(out, "mutate.md")) as f:
                self.assertIn("| left out | tests matching `^regress` (--exclude) |", f.read())

    def test_broken_build_directory_is_no_verdict(self):
        """A build that fails without the mutation too is the build directory's fault: an
        error, not a stillborn mutant."""
        with tempfile.TemporaryDirectory() as d:
            out, argv = self.mini(d, seeds=1, mutants=MUTANTS + '''[[mutant]]
name = "breakdir"
class = "wrong_constant"
file = "rtl/dma/srnic_sched.sv"
find = "assign db_overflow = db_valid && !dbq_in_ready;"
replace = "assign db_overflow = db_valid && !dbq_in_ready; // BREAKDIR"
''')
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv + ["--only", "breakdir"])
            self.assertEqual(rc, 2, buf.getvalue())
            with open(os.path.join(out, "mutate.json")) as f:
                r = json.load(f)["results"][0]
            self.assertEqual(r["result"], "error")
            self.assertIn("the build fails without the mutation too", r["by"])
            self.assertIn("score: 0 killed, 0 survived, 0 stillborn (build failed, not scored), 1 errors",
                          buf.getvalue())

    def test_failing_baseline_reports_no_kill_rate(self):
        """A test that fails on the unmutated RTL stops the run before any mutant: no verdicts,
        no kill rate."""
        with tempfile.TemporaryDirectory() as d:
            out, argv0 = self.mini(d)
            ctest = mutate.run_ctest

            def broken(opts, test, seed, log):
                ok, by = ctest(opts, test, seed, log)
                return (False, "Failure: broken bench") if test.name == "fullchip_x" else (ok, by)
            mutate.run_ctest = broken
            argv = argv0 + ["--only", "survive"]
            buf, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
                rc = mutate.main(argv)
            self.assertEqual(rc, 2)
            self.assertIn("the unmutated baseline does not pass", err.getvalue())
            self.assertIn("no kill rate", err.getvalue())
            self.assertNotIn("kill rate:", buf.getvalue())
            self.assertFalse(os.path.exists(os.path.join(out, "mutate.json")))
            # --no-baseline would not notice: verdicts, but explicitly no kill rate
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = mutate.main(argv + ["--no-baseline"])
            self.assertEqual(rc, 0)
            self.assertIn("survive: killed by fullchip_x", buf.getvalue())
            self.assertEqual(buf.getvalue().splitlines()[-1], "no baseline: kill rate not reported")


if __name__ == "__main__":
    unittest.main()
