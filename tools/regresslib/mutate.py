"""tools/mutate: mutation testing of the verification environment. Each mutant of
verif/mutations.toml is one textual change of one RTL file. The RTL is mirrored into
<out>/rtl (the repository's rtl/ is never touched) and the change applied there; a dedicated
build directory is configured with -DSRNIC_CORE_FILELIST=<out>/srnic_core.f and
-DSRNIC_RTL_DIR=<out>/rtl, so every model of the project (chip and block benches) is built from
the mirror. The tests that exercise the mutated file run cheapest first: its block benches
(CTest tests block_*), the full-chip CTest tests (<build>/rtl_tests.tsv says which RTL each
test uses), and the UVM-lite regression (smoke by default); only the targets a test needs are
rebuilt before it runs. A mutant is killed when any of them fails (by default the first
failure stops the mutant; --all-tests runs them all and records every killer), stillborn when
Verilator (with -Wall) or the compiler rejects it (no test ran it: it is reported apart and
left out of the kill rate), and survives otherwise. An unmutated baseline first runs every test
the selected mutants will run and must pass; only a run with a passing baseline reports a kill
rate (--no-baseline is for debugging: its verdicts are printed, no kill rate). --check also
fails when an RTL file under rtl/ has no mutant. See docs/regression.md."""

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import time

from . import ROOT, ToolError
from . import config, history
from .runner import display_path

LOCKED = os.path.join(ROOT, "cmake", "locked.sh")
FILELIST = "rtl/srnic_core.f"
LINE_HINT_SLACK = 5        # --check warns when a mutant's line hint is further off than this


# ------------------------------------------------------------------------ applying mutants

def locate(mutant, root=ROOT):
    """(text of the mutant's file, offset of its find string); ToolError unless the string
    occurs exactly once."""
    path = os.path.join(root, mutant.file)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        raise ToolError(f"mutant '{mutant.name}': file {mutant.file} does not exist") from None
    n = text.count(mutant.find)
    if n != 1:
        raise ToolError(f"mutant '{mutant.name}': 'find' occurs {n} times in {mutant.file} "
                        f"(must be exactly once): {mutant.find!r}")
    return text, text.index(mutant.find)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def mutated_text(mutant, root=ROOT):
    text, off = locate(mutant, root)
    return text[:off] + mutant.replace + text[off + len(mutant.find):]


def check(mutants, root=ROOT):
    """Problems (errors) and warnings of a mutant list, without building."""
    errors, warnings = [], []
    for m in mutants:
        try:
            text, off = locate(m, root)
        except ToolError as e:
            errors.append(str(e))
            continue
        ln = line_of(text, off)
        if m.line and abs(m.line - ln) > LINE_HINT_SLACK:
            warnings.append(f"mutant '{m.name}': line hint {m.line}, but 'find' is at {m.file}:{ln}")
    return errors, warnings


def uncovered_files(mutants, root=ROOT):
    """RTL files under rtl/ (recursively, every *.sv) that no mutant changes."""
    have = {m.file for m in mutants}
    return [f for f in rtl_files(root) if f not in have]


def sync_tree(src, dst, overrides=None):
    """Makes dst a copy of src, writing only files whose content differs (so their mtime moves
    and the build notices), and removing files src does not have. overrides: relative path ->
    content used instead of the source file's."""
    overrides = overrides or {}
    want = set()
    for dirpath, _, files in os.walk(src):
        for fn in files:
            rel = os.path.relpath(os.path.join(dirpath, fn), src)
            want.add(rel)
            if rel in overrides:
                data = overrides[rel].encode()
            else:
                with open(os.path.join(src, rel), "rb") as f:
                    data = f.read()
            target = os.path.join(dst, rel)
            try:
                with open(target, "rb") as f:
                    same = f.read() == data
            except FileNotFoundError:
                same = False
            if not same:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(data)
    for dirpath, _, files in os.walk(dst):
        for fn in files:
            p = os.path.join(dirpath, fn)
            if os.path.relpath(p, dst) not in want:
                os.remove(p)


def write_filelist(src_list, dst_list, tree, root=ROOT):
    """Rewrites a file list whose sources are relative to the repository root so that every
    rtl/ source points into the mirrored tree (absolute paths); other sources become absolute
    repository paths, +incdir+ lines -I options. rtl/lint.vlt stays the repository's copy (the
    model build adds it anyway)."""
    out = []
    with open(src_list) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#") or line.startswith("//"):
                out.append(line)
            elif line.startswith("+incdir+"):
                d = line[len("+incdir+"):]
                out.append("-I" + _map(d, tree, root))
            elif line.startswith(("-", "+")):
                out.append(line)
            elif line == "rtl/lint.vlt":
                out.append(os.path.join(root, line))
            else:
                out.append(_map(line, tree, root))
    with open(dst_list, "w") as f:
        f.write("// srnic_core sources of a mutant, generated by tools/mutate from "
                f"{os.path.relpath(src_list, root)}\n")
        f.write("\n".join(out) + "\n")


def _map(path, tree, root):
    if os.path.isabs(path):
        return path
    if path == "rtl" or path.startswith("rtl/"):
        return os.path.join(tree, path)
    return os.path.join(root, path)


# ------------------------------------------------------------------------ tests of a file

REGRESS_TEST = "regress"       # name prefix of the UVM-lite regression in reports ("regress:smoke")
RTL_TESTS = "rtl_tests.tsv"    # written by CMake (srnic_rtl_test) into the build directory


class RtlTest:
    """One test that can kill a mutant: a CTest test from <build>/rtl_tests.tsv (a block bench
    or a full-chip test) or the UVM-lite regression. files: RTL files it exercises (relative to
    the repository root, 'rtl/...'); targets: what must be built before it runs."""

    def __init__(self, name, files, targets, kind):
        self.name, self.files, self.targets, self.kind = name, frozenset(files), list(targets), kind

    def __repr__(self):
        return f"RtlTest({self.name!r}, {self.kind})"


def filelist_sources(path, tree, root=ROOT):
    """RTL files ('rtl/...') a file list names: relative rtl/ entries, and absolute paths into
    the mirror <tree>/rtl."""
    out = set()
    mirror = os.path.join(tree, "rtl") + os.sep
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(("#", "//", "-", "+")) or line.endswith(".vlt"):
                continue
            if os.path.isabs(line):
                if line.startswith(mirror):
                    out.add("rtl/" + line[len(mirror):])
                elif line.startswith(os.path.join(root, "rtl") + os.sep):
                    out.add(os.path.relpath(line, root))
            elif line.startswith("rtl/"):
                out.add(line)
    return out


def load_rtl_tests(build_dir, tree, root=ROOT):
    """The CTest tests that exercise RTL, from <build_dir>/rtl_tests.tsv."""
    path = os.path.join(build_dir, RTL_TESTS)
    try:
        with open(path) as f:
            rows = [ln.rstrip("\n").split("\t") for ln in f if ln.strip() and not ln.startswith("#")]
    except FileNotFoundError:
        raise ToolError(f"{display_path(path)} does not exist (configure {display_path(build_dir)} "
                        "with this version of the project)") from None
    tests = []
    for row in rows:
        if len(row) != 3:
            raise ToolError(f"{display_path(path)}: malformed line {row!r}")
        name, flist, targets = row
        kind = "block" if name.startswith("block_") else "chip"
        tests.append(RtlTest(name, filelist_sources(flist, tree, root), targets.split(","), kind))
    return tests


def order_tests(tests, times):
    """Cheapest first: block benches before full-chip tests (whose model takes longest to
    build), each group by the run time measured on the baseline (unknown: last)."""
    big = float("inf")
    return sorted(tests, key=lambda t: (t.kind != "block", times.get(t.name, big), t.name))


def tests_for(file, tests):
    return [t for t in tests if file in t.files]


# ------------------------------------------------------------------------ build and run

def _run_logged(cmd, log, cwd=ROOT, env=None):
    with open(log, "a") as f:
        f.write("$ " + shlex.join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL).returncode


def cached_var(build_dir, var):
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(var + ":"):
                    return line.split("=", 1)[1].strip()
    except FileNotFoundError:
        pass
    return None


def cached_filelist(build_dir):
    return cached_var(build_dir, "SRNIC_CORE_FILELIST")


def _cmake_newer_than(path):
    """Whether a CMake file or a Verilator file list (*.f, read at configure time) of the
    project changed after `path` was written: the test list (rtl_tests.tsv) is written at
    configure time, so tests added since would be missed, and a block bench whose file list
    gained a file would fail to build."""
    t = os.path.getmtime(path)
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x != "build"]
        for n in files:
            if ((n == "CMakeLists.txt" or n.endswith(".cmake") or n.endswith(".f"))
                    and os.path.getmtime(os.path.join(d, n)) > t):
                return True
    return False


def configure(build_dir, filelist, rtl_dir, log):
    """Configures the mutant build directory once (again only if it points elsewhere): the
    chip models from the mirrored file list, every other model (block benches) from the mirror
    through SRNIC_RTL_DIR."""
    tsv = os.path.join(build_dir, RTL_TESTS)
    if (cached_filelist(build_dir) == filelist and cached_var(build_dir, "SRNIC_RTL_DIR") == rtl_dir
            and os.path.exists(os.path.join(build_dir, "build.ninja"))
            and os.path.exists(tsv) and not _cmake_newer_than(tsv)):
        return
    cmd = [LOCKED, "cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja",
           f"-DSRNIC_CORE_FILELIST={filelist}", f"-DSRNIC_RTL_DIR={rtl_dir}"]
    if _run_logged(cmd, log) != 0:
        raise ToolError(f"configuring {display_path(build_dir)} failed (log {display_path(log)})")


_BUILD_ERR = re.compile(r"(%Error|%Warning|error:|Error \d+|FAILED:)")
_TEST_ERR = re.compile(r"(Failure|FAILED|ERROR|Error|error|mismatch|Assertion|Aborted|Timeout|"
                       r"Segmentation|Exception)")
_TEST_FAIL = re.compile(r"(: Failure$|^FAIL|\bERROR\b|Assertion .* failed|Aborted|\bTimeout\b)")
_CTEST_NOISE = re.compile(r"^(\d+% tests passed|The following tests FAILED|Errors while running|"
                          r"Total Test time|\s*\d+/\d+ Test|\s*\d+ - |Test project|\$ )")


def first_build_error(log):
    """The most telling line of a failed build: Verilator's first %Error/%Warning, else the
    compiler's first error, else ninja's first FAILED line."""
    try:
        with open(log, errors="replace") as f:
            lines = [ln.strip() for ln in f if not ln.startswith("$ ")]
    except OSError:
        return "build failed"
    for rx in (re.compile(r"^%(Error|Warning)"), re.compile(r"error:"), _BUILD_ERR):
        for line in lines:
            if rx.search(line):
                return line[:300]
    return "build failed"


def first_test_error(log):
    """The first line of a failed test's output that looks like its failure."""
    try:
        with open(log, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "failed"
    # (GoogleTest's RUN and OK lines name tests, e.g. "...TimeoutZeroCancel": never a failure)
    lines = [ln for ln in lines if not _CTEST_NOISE.search(ln)
             and not ln.lstrip().startswith(("[ RUN", "[       OK"))]
    for rx in (_TEST_FAIL, _TEST_ERR):       # an explicit failure line first, then anything alike
        for line in lines:
            if rx.search(line):
                return line.strip()[:300]
    return "failed"


def build_targets(opts, targets, log):
    """Builds targets in the mutant build directory (ninja redoes only what the changed RTL
    file feeds); False if it fails."""
    return _run_logged([LOCKED, "cmake", "--build", opts.build_dir, "--target", *targets, "-j2"], log) == 0


def run_ctest(opts, test, seed, log):
    """Runs one CTest test of the mutant build directory; (passed, first error line)."""
    env = dict(os.environ, SRNIC_SEED=str(seed))
    cmd = ["ctest", "--test-dir", opts.build_dir, "-R", f"^{re.escape(test.name)}$",
           "--output-on-failure", "--no-tests=error"]
    if opts.timeout:
        cmd += ["--timeout", str(int(opts.timeout))]
    rc = _run_logged(cmd, log, env=env)
    return rc == 0, ("" if rc == 0 else first_test_error(log))


def run_regression(opts, seed, d, log):
    """The UVM-lite regression against the mutant's fast program; (verdict, by, tests, runs)
    with verdict 'pass', 'fail' or 'error'."""
    rdir = os.path.join(d, "regress")
    cmd = [sys.executable, os.path.join(ROOT, "tools", "regress"), "--regression", opts.regression,
           "--build", "fast", "--no-build", "--build-dir", opts.build_dir, "--prog-fast", opts.prog_fast,
           "--no-rerun", "--no-history", "--jobs", str(opts.jobs), "--seed", str(seed), "--out", rdir,
           "--regressions-file", opts.regressions_file]
    if opts.timeout:
        cmd += ["--timeout", str(opts.timeout)]
    if not opts.full:
        cmd.append("--fail-fast")
    rc = _run_logged(cmd, log)
    try:
        with open(os.path.join(rdir, "results.json")) as f:
            rr = json.load(f)
    except (OSError, ValueError):
        return "error", f"regression did not complete (exit {rc}, log {display_path(log)})", "", 0
    c = rr["counts"]
    runs = c["total"] - c["skipped"]
    if c["failed"]:
        b = rr["buckets"][0]
        return "fail", b["key"], ", ".join(b["tests"]), runs
    return "pass", "", "", runs


def run_mutant(name, overrides, tests, opts, seed, stop_at_first=True):
    """Mirror one tree state, then build and run the given tests in order (cheapest first),
    stopping at the first that fails unless stop_at_first is False. Returns a result dict:
    result killed | stillborn | survived | error; killers: every test that failed (with
    the first line of its failure); test_times: run time of each test that ran. stillborn: a
    build of the mutant failed (Verilator -Wall or the compiler rejected it), whatever tests
    ran before; no test judged the model the failed build was for, so it is no kill."""
    t0 = time.monotonic()
    d = os.path.join(opts.out, "runs", name)
    os.makedirs(d, exist_ok=True)
    for fn in os.listdir(d):
        if fn.endswith(".log"):
            os.remove(os.path.join(d, fn))
    sync_tree(os.path.join(ROOT, "rtl"), os.path.join(opts.out, "rtl"), overrides)
    res = {"name": name, "result": "", "by": "", "test": "", "killers": [], "ran": [],
           "test_times": {}, "failed": 0, "runs": 0, "dir": display_path(d)}
    build_log = os.path.join(d, "build.log")
    errors = []
    built = set()
    for i, t in enumerate(tests):
        if t.name not in built:
            # one build per stage (block benches, then everything on the chip model): each
            # build waits for the machine-wide lock once, and a mutant its block bench kills
            # never pays for the chip model
            stage = [u for u in tests[i:] if (u.kind == "block") == (t.kind == "block")]
            targets = list(dict.fromkeys(x for u in stage for x in u.targets))
            built.update(u.name for u in stage)
            if not build_targets(opts, targets, build_log):
                # The mutant's fault only if the same targets build without it: a build
                # directory whose configuration is stale (a file list that gained a file)
                # fails either way, and that is no verdict. (Verilator runs while ninja
                # regenerates build.ninja, so its rejections and a failed re-configuration
                # look alike in the log.)
                why = first_build_error(build_log)
                sane = False
                if overrides:
                    sync_tree(os.path.join(ROOT, "rtl"), os.path.join(opts.out, "rtl"))
                    sane = build_targets(opts, targets, os.path.join(d, "build-unmutated.log"))
                if sane:
                    res.update(result="stillborn", by=why, test=f"build ({t.name})")
                else:
                    res.update(result="error", by="the build fails without the mutation too (the build "
                               f"directory, not the mutant): {why}", test="build")
                    errors.append(res["by"])
                break
        t1 = time.monotonic()
        if t.kind == "regress":
            verdict, by, which, runs = run_regression(opts, seed, d, os.path.join(d, "regress.log"))
            res["runs"] = runs
            if verdict == "error":
                errors.append(f"{t.name}: {by}")
            failed = verdict == "fail"
            label = f"{t.name} ({which})" if which else t.name
        else:
            ok, by = run_ctest(opts, t, seed, os.path.join(d, f"{t.name}.log"))
            failed, label = not ok, t.name
        res["test_times"][t.name] = round(time.monotonic() - t1, 1)
        res["ran"].append(t.name)
        if failed:
            res["failed"] += 1
            res["killers"].append({"test": label, "by": by})
            if stop_at_first:
                break
    if not res["result"]:
        if res["killers"]:
            res.update(result="killed", by=res["killers"][0]["by"],
                       test=", ".join(k["test"] for k in res["killers"]))
        elif errors:
            res.update(result="error", by=errors[0])
        else:
            res["result"] = "survived"
    res["time"] = round(time.monotonic() - t0, 1)
    return res


BLOCK_CMAKE = "verif/blocks/CMakeLists.txt"


def block_lint_targets(root=ROOT):
    """The block benches' Verilator builds as lint targets: (name, top, file list, -G args),
    from the srnic_block_bench() calls of verif/blocks/CMakeLists.txt."""
    with open(os.path.join(root, BLOCK_CMAKE)) as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    out = []
    for m in re.finditer(r"srnic_block_bench\(([^)]*)\)", text):
        words = m.group(1).split()
        if not words or words[0] == "name":
            continue
        name, top, flist, params, key = words[0], None, None, [], None
        for w in words[1:]:
            if w in ("TOP", "FILELIST", "SOURCES", "PARAMS", "LIBS"):
                key = w
            elif key == "TOP":
                top = w
            elif key == "FILELIST":
                flist = w.replace("${F}", os.path.join(root, "verif", "blocks"))
            elif key == "PARAMS":
                params.append("-G" + w)
        if top and flist:
            out.append((name, top, flist, params))
    return out


def filelist_names(path):
    with open(path) as f:
        return {ln.strip() for ln in f if ln.strip() and not ln.strip().startswith("//")}


def lint_all(mutants, out, errors):
    """Verilator --lint-only -Wall of every mutant that applies, in <out>/lint, the way the
    builds see it: the core with and without --assert, and every block bench whose file list
    holds the mutated file, with its top, its parameters and --assert."""
    for e in errors:
        print(f"mutate: error: {e}")
    base = os.path.join(out, "lint")
    os.makedirs(base, exist_ok=True)
    flist = os.path.join(base, "srnic_core.f")
    write_filelist(os.path.join(ROOT, FILELIST), flist, base)
    blocks = [(name, top, bflist, params, filelist_names(bflist)) for name, top, bflist, params in block_lint_targets()]
    bad = list(errors)
    ok = [m for m in mutants if not any(f"'{m.name}'" in e for e in errors)]
    for m in ok:
        sync_tree(os.path.join(ROOT, "rtl"), os.path.join(base, "rtl"),
                  {os.path.relpath(m.file, "rtl"): mutated_text(m)})
        runs = [("core", ["-f", flist, "--top-module", "srnic_core"]),
                ("core --assert", ["--assert", "-f", flist, "--top-module", "srnic_core"])]
        for name, top, bflist, params, files in blocks:
            if m.file in files:
                # the project-wide waivers come first, as in the CMake build
                runs.append((name, ["--assert", *params, "rtl/lint.vlt", "-f", bflist, "--top-module", top]))
        failed = None
        for what, args in runs:
            p = subprocess.run([LOCKED, "verilator", "--lint-only", "-Wall", *args], cwd=base,
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if p.returncode != 0:
                msg = next((ln for ln in (p.stderr + p.stdout).splitlines() if _BUILD_ERR.search(ln)),
                           f"exit code {p.returncode}")
                failed = f"{what}: {msg.strip()}"
                break
        if failed is None:
            print(f"lint ok    {m.name} ({len(runs)} builds)")
        else:
            print(f"lint FAIL  {m.name} (stillborn): {failed}")
            bad.append(m.name)
    sync_tree(os.path.join(ROOT, "rtl"), os.path.join(base, "rtl"))
    print(f"mutate --lint: {len(mutants) - len(bad)}/{len(mutants)} mutants pass Verilator -Wall "
          f"(core, core --assert, their block benches); {len(bad)} would be stillborn")
    return 1 if bad else 0


# ------------------------------------------------------------------------ reporting

RESULT_TEXT = {"killed": "killed", "stillborn": "stillborn (build failed)", "survived": "SURVIVED",
               "error": "ERROR"}
SCORED = ("killed", "survived")     # the verdicts the kill rate counts


def counts(results):
    """{killed, survived, stillborn, error}: how many mutants got each verdict."""
    c = {k: 0 for k in ("killed", "survived", "stillborn", "error")}
    for r in results:
        c[r["result"]] += 1
    return c


def kill_stats(results):
    """(killed, scored): the kill rate's numerator and denominator. Only mutants a test judged
    count: stillborn ones (the build rejected them) and errors are left out."""
    c = counts(results)
    return c["killed"], c["killed"] + c["survived"]


def rtl_files(root=ROOT):
    """Every RTL source file of the project ('rtl/...sv'), sorted."""
    out = []
    for dp, _, fns in os.walk(os.path.join(root, "rtl")):
        for fn in fns:
            if fn.endswith(".sv"):
                out.append(os.path.relpath(os.path.join(dp, fn), root))
    return sorted(out)


def per_file(results, mutants, files=()):
    """{file: (mutants, killed, scored, stillborn)} over the files of the mutants and `files`;
    scored = killed + survived."""
    by_name = {m.name: m for m in mutants}
    table = {f: [0, 0, 0, 0] for f in files}
    for r in results:
        m = by_name.get(r["name"])
        if not m:
            continue
        row = table.setdefault(m.file, [0, 0, 0, 0])
        row[0] += 1
        if r["result"] in SCORED:
            row[2] += 1
            row[1] += r["result"] == "killed"
        row[3] += r["result"] == "stillborn"
    return {f: tuple(v) for f, v in sorted(table.items())}


NO_BASELINE = "no baseline: kill rate not reported"


def baseline_text(b):
    if not b["ran"]:
        return "not run (--no-baseline): the tests were not shown to pass on the unmutated RTL"
    return (f"passed: {len(b['tests'])} tests on the unmutated RTL ({b['runs']} regression runs, "
            f"{b['time_s']:.0f} s)")


def score_line(c):
    return (f"score: {c['killed']} killed, {c['survived']} survived, {c['stillborn']} stillborn "
            f"(build failed, not scored), {c['error']} errors")


def write_report(results, mutants, meta, path, files=()):
    by_name = {m.name: m for m in mutants}
    killed, n = kill_stats(results)
    c = counts(results)
    rated = meta["baseline"]["passed"] is True
    lines = ["# Mutation testing", "",
             "| | |", "|---|---|",
             f"| tests | every test that exercises the mutated file: block benches, full-chip tests, "
             f"regression {meta['regression']} (master seed `--seed {meta['seed']}`) |",
             f"| mode | {'all tests per mutant' if meta.get('all_tests') else 'cheapest first, stop at the first kill'} |",
             *([f"| left out | tests matching `{meta['exclude']}` (--exclude) |"] if meta.get("exclude") else []),
             f"| baseline | {baseline_text(meta['baseline'])} |",
             f"| mutants | {len(results)} |",
             f"| killed | {c['killed']} (by a test) |",
             f"| survived | {c['survived']} |",
             f"| stillborn | {c['stillborn']} (a build rejected the mutant: not scored) |",
             f"| errors | {c['error']} |",
             f"| kill rate | {_rate(killed, n) if rated else NO_BASELINE} |",
             f"| started | {meta['started']} |",
             f"| wall time | {meta['wall_s']:.0f} s |", ""]
    if meta.get("uncovered"):
        lines += [f"RTL files without mutants: {', '.join(meta['uncovered'])}", ""]
    lines += ["## Per file", "",
              "| file | mutants | killed | stillborn | kill rate |", "|---|---|---|---|---|"]
    for f, (nm, k, sc, sb) in per_file(results, mutants, files).items():
        lines.append(f"| {f} | {nm} | {k} | {sb} | {_rate(k, sc) if rated else '-'} |")
    lines += ["", "## Mutants", "",
              "| mutant | class | location | result | killed by | first failure | time (s) |",
              "|---|---|---|---|---|---|---|"]
    for r in results:
        m = by_name.get(r["name"])
        loc = f"{m.file}:{r.get('line', '')}" if m else ""
        cls = m.cls if m else ""
        by = r["by"].replace("|", "\\|")
        lines.append(f"| {r['name']} | {cls} | {loc} | {RESULT_TEXT[r['result']]} | "
                     f"{r['test'].replace('|', '/')} | {by} | {r['time']:.0f} |")
    surv = [r for r in results if r["result"] == "survived"]
    if surv:
        lines += ["", "## Survivors", "",
                  "No test noticed these changes: a missing check, a missing stimulus, or an "
                  "equivalent mutant.", ""]
        for r in surv:
            m = by_name[r["name"]]
            lines += [f"### {m.name} ({m.cls}, {m.file}:{r.get('line', '')})", "",
                      m.desc or "", "", f"Tests run: {', '.join(r.get('ran', [])) or '-'}", "",
                      "```diff", f"- {m.find}", f"+ {m.replace}", "```", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")


def _rate(k, n):
    return f"{k}/{n} ({100.0 * k / n:.1f}%)" if n else "-"


# ------------------------------------------------------------------------ command line

def build_parser():
    p = argparse.ArgumentParser(
        prog="tools/mutate",
        description="Mutation testing: apply each RTL mutant of verif/mutations.toml to a mirror "
                    "of rtl/, rebuild what the mutated file feeds and run the tests that exercise it "
                    "(block benches, full-chip tests, a UVM-lite regression), cheapest first.")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    p.add_argument("--check", action="store_true",
                   help="check that every mutant applies (its find string occurs once); no build")
    p.add_argument("--lint", action="store_true",
                   help="Verilator -Wall lint of each mutant (seconds each): which would be killed by the build")
    p.add_argument("--only", metavar="A,B,..", help="comma-separated mutant names to run")
    p.add_argument("--regression", default="smoke", metavar="NAME", help="regression to run per mutant (default smoke)")
    p.add_argument("--jobs", "-j", type=int, default=2, metavar="J", help="parallel runs of the regression (default 2)")
    p.add_argument("--seed", type=int, metavar="S", help="master seed of the regression, the same for every mutant "
                                            "(default: random, printed)")
    p.add_argument("--timeout", type=float, metavar="SEC", help="per-run timeout passed to tools/regress")
    p.add_argument("--full", action="store_true",
                   help="run the whole regression per mutant (default: stop at its first failure)")
    p.add_argument("--all-tests", action="store_true",
                   help="run every test of the mutated file and record every killer (default: stop "
                        "at the first test that kills the mutant)")
    p.add_argument("--exclude", metavar="REGEX",
                   help="leave out the tests whose name matches REGEX (CTest names, or 'regress:NAME')")
    p.add_argument("--no-baseline", action="store_true",
                   help="debugging only: skip the unmutated baseline run; verdicts are printed, but no "
                        "kill rate is reported (not with --history or --require-kill-rate)")
    p.add_argument("--history", metavar="FILE",
                   help="append the kill rate to this regression history file (JSON lines, e.g. "
                        "build/regress/history.jsonl; the nightly report plots it)")
    p.add_argument("--require-kill-rate", type=float, metavar="PCT",
                   help="exit 1 when the kill rate is below PCT percent")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "mutate", "mutants"), metavar="DIR",
                   help="work and report directory (default build/mutate/mutants)")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build", "mutate"), metavar="DIR",
                   help="dedicated CMake build directory (default build/mutate)")
    p.add_argument("--prog-fast", default="verif/env/srnic-uvm", metavar="PATH",
                   help="fast test program relative to the build dir (its basename is the CMake target)")
    p.add_argument("--mutations", default=os.path.join(ROOT, "verif", "mutations.toml"), metavar="FILE",
                   help="mutant definitions (default verif/mutations.toml)")
    p.add_argument("--regressions-file", default=os.path.join(ROOT, "verif", "regressions.toml"),
                   metavar="FILE", help="regression definitions (default verif/regressions.toml)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return _main(args)
    except ToolError as e:
        print(f"mutate: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mutate: interrupted (the mirror in the output directory may hold a mutant; the "
              "next run restores it)", file=sys.stderr)
        return 130


def _main(args):
    mutants = config.load_mutations(args.mutations)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        known = {m.name for m in mutants}
        for n in names:
            if n not in known:
                raise ToolError(f"unknown mutant '{n}' (see --list)")
        mutants = [m for m in mutants if m.name in names]
    if args.list:
        for m in mutants:
            try:
                text, off = locate(m)
                loc = f"{m.file}:{line_of(text, off)}"
            except ToolError:
                loc = f"{m.file}:?"
            print(f"{m.name:32s} {m.cls:18s} {loc:32s} {m.desc}")
        return 0
    errors, warnings = check(mutants)
    if args.check:
        for w in warnings:
            print(f"mutate: warning: {w}")
        for e in errors:
            print(f"mutate: error: {e}")
        print(f"mutate --check: {len(mutants) - len(errors)}/{len(mutants)} mutants apply "
              f"({display_path(args.mutations)})")
        bare = []
        if not args.only:       # a selection need not cover every file
            bare = uncovered_files(mutants)
            for f in bare:
                print(f"mutate: error: {f} has no mutant")
            print(f"mutate --check: {len(rtl_files()) - len(bare)}/{len(rtl_files())} RTL files under "
                  f"rtl/ have mutants")
        return 1 if errors or bare else 0
    if args.lint:
        return lint_all(mutants, os.path.abspath(args.out), errors)
    if errors:
        raise ToolError(errors[0] + (f" (and {len(errors) - 1} more; run --check)" if len(errors) > 1 else ""))
    if args.jobs < 1:
        raise ToolError("--jobs must be >= 1")
    if args.no_baseline and (args.history or args.require_kill_rate is not None):
        raise ToolError("--history and --require-kill-rate need a kill rate, which only a run with "
                        "the baseline reports (leave out --no-baseline)")
    regs = config.load_regressions(args.regressions_file)
    if args.regression not in regs:
        raise ToolError(f"unknown regression '{args.regression}' (defined: {', '.join(regs)})")

    args.out = os.path.abspath(args.out)
    args.build_dir = os.path.abspath(args.build_dir)
    os.makedirs(args.out, exist_ok=True)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    t_start = time.monotonic()
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    print(f"mutate: {len(mutants)} mutants, regression {args.regression}, master seed {seed} "
          f"(repeat with --seed {seed}), build dir {display_path(args.build_dir)}, "
          f"output {display_path(args.out)}", flush=True)

    tree = os.path.join(args.out, "rtl")
    sync_tree(os.path.join(ROOT, "rtl"), tree)
    flist = os.path.join(args.out, "srnic_core.f")
    write_filelist(os.path.join(ROOT, FILELIST), flist, args.out)
    configure(args.build_dir, flist, tree, os.path.join(args.out, "configure.log"))

    tests = load_rtl_tests(args.build_dir, args.out)
    tests.append(RtlTest(f"{REGRESS_TEST}:{args.regression}", filelist_sources(flist, args.out),
                         [os.path.basename(args.prog_fast)], "regress"))
    if args.exclude:
        rx = re.compile(args.exclude)
        tests = [t for t in tests if not rx.search(t.name)]
    times_file = os.path.join(args.out, "baseline.json")
    times = {}
    # the baseline: every test a selected mutant will run (all of them for a full run)
    files = {m.file for m in mutants}
    base_tests = [t for t in tests if t.files & files]
    baseline = {"ran": False, "passed": None, "tests": [], "runs": 0, "time_s": 0.0}
    if not args.no_baseline:
        print(f"mutate: baseline (no mutation): the {len(base_tests)} tests of the selected mutants' "
              f"files ...", flush=True)
        b = run_mutant("baseline", {}, order_tests(base_tests, {}), args, seed, stop_at_first=False)
        if b["result"] != "survived":
            what = "a build failed" if b["result"] == "stillborn" else RESULT_TEXT[b["result"]]
            raise ToolError(f"the unmutated baseline does not pass ({what}: "
                            f"{b['test']}: {b['by']}); no kill rate; see {b['dir']}")
        times = b["test_times"]
        with open(times_file, "w") as f:
            json.dump({"seed": seed, "test_times": times}, f, indent=1)
        baseline.update(ran=True, passed=True, tests=b["ran"], runs=b["runs"], time_s=b["time"])
        print(f"mutate: baseline passes ({len(b['ran'])} tests, {b['runs']} regression runs, "
              f"{b['time']:.0f} s)", flush=True)
    else:
        print(f"mutate: --no-baseline: the tests are not shown to pass on the unmutated RTL; "
              f"verdicts only, {NO_BASELINE}", flush=True)
        if os.path.exists(times_file):
            with open(times_file) as f:
                times = json.load(f).get("test_times", {})

    results = []
    for i, m in enumerate(mutants, start=1):
        text, off = locate(m)
        rel = os.path.relpath(m.file, "rtl")
        mine = order_tests(tests_for(m.file, tests), times)
        r = run_mutant(m.name, {rel: mutated_text(m)}, mine, args, seed,
                       stop_at_first=not args.all_tests)
        r["line"] = line_of(text, off)
        r["file"] = m.file
        results.append(r)
        verdict = (f"stillborn: {r['test']} failed" if r["result"] == "stillborn"
                   else RESULT_TEXT[r["result"]] + (f" by {r['test']}" if r["test"] else ""))
        print(f"[{i}/{len(mutants)}] {m.name}: {verdict}"
              + (f" ({r['by']})" if r["by"] else "") + f", {len(r['ran'])}/{len(mine)} tests, "
              f"{r['time']:.0f} s", flush=True)
    sync_tree(os.path.join(ROOT, "rtl"), tree)      # leave the mirror unmutated

    rated = baseline["passed"] is True
    killed, n = kill_stats(results)
    c = counts(results)
    files = rtl_files() if not args.only else ()
    uncovered = uncovered_files(mutants) if not args.only else []
    meta = {"regression": args.regression, "seed": seed, "started": started,
            "all_tests": args.all_tests, "wall_s": time.monotonic() - t_start,
            "baseline": baseline, "uncovered": uncovered, "exclude": args.exclude}
    report = os.path.join(args.out, "mutate.md")
    write_report(results, mutants, meta, report, files)
    pf = per_file(results, mutants, files)
    with open(os.path.join(args.out, "mutate.json"), "w") as f:
        json.dump({"meta": meta, "results": results, "counts": c,
                   "kill_rate": ({"killed": killed, "scored": n,
                                  "pct": round(100.0 * killed / n, 2) if n else None} if rated else None),
                   "files": {k: {"mutants": v[0], "killed": v[1], "scored": v[2], "stillborn": v[3]}
                             for k, v in pf.items()}},
                  f, indent=1)
    if args.history:
        history.append(args.history, history.mutate_record(args.regression, seed, killed, n,
                                                           meta["wall_s"], display_path(args.out)))
    surv = [r["name"] for r in results if r["result"] == "survived"]
    still = [r["name"] for r in results if r["result"] == "stillborn"]
    print()
    width = max((len(k) for k in pf), default=4)
    print(f"{'file':{width}s}  mutants  killed  stillborn  kill rate")
    for k, (nm, kk, sc, sb) in pf.items():
        rate = f"{100.0 * kk / sc:.1f}%" if sc and rated else "-"
        print(f"{k:{width}s}  {nm:7d}  {kk:6d}  {sb:9d}  {rate}")
    if surv:
        print(f"survivors: {', '.join(surv)}")
    if still:
        print(f"stillborn (a build rejected them; not scored): {', '.join(still)}")
    for f in uncovered:
        print(f"mutate: warning: {f} has no mutant")
    print(f"report: {display_path(report)}")
    print(score_line(c))
    # (a run in which no mutant was scored has no kill rate to meet the requirement with)
    below = (rated and args.require_kill_rate is not None
             and (not n or 100.0 * killed / n < args.require_kill_rate))
    if below:
        print(f"mutate: kill rate below the required {args.require_kill_rate:g}%")
    print(f"kill rate: {_rate(killed, n)}" if rated else NO_BASELINE)
    if c["error"]:
        return 2
    return 1 if below else 0
