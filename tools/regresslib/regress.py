"""tools/regress: run a regression (seeds x tests of the UVM-lite test programs), bucket the
failures, rerun one failure per bucket with waves, merge coverage and report. See
docs/regression.md."""

import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time

from . import ROOT, ToolError
from . import carry, config, coverage, history, outdir, report
from . import testplan as tpmod
from .runner import Executor, Run, clear_result, derive_seed, display_path, read_result
from .slurm import SlurmOptions, SlurmSession

PROGRAMS = {"fast": "verif/env/srnic-uvm", "coverage": "verif/env/srnic-uvm-cov",
            "debug": "verif/env/srnic-uvm-debug"}
DEFAULT_TIMEOUT = 600.0
DEFAULT_REGRESSION = "smoke"
DEFAULT_JOBS = 2
NIGHTLY = "nightly"          # appends to the history file without --history
SLURM_OPTIONS = ("partition", "time_limit", "array_throttle", "runs_per_task", "sbatch_args")
RERUN_TIMEOUT_FACTOR = 4     # debug build with waves: slower than the run that failed
LOCKED = os.path.join(ROOT, "cmake", "locked.sh")
OUT_ROOT = os.path.join(ROOT, "build", "regress")
HISTORY_DEFAULT_DISPLAY = f"build/regress/{history.HISTORY_NAME}, with --out beside the output directory"


def _csv(kind):
    def parse(s):
        items = [x.strip() for x in s.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"empty {kind} list")
        return items
    return parse


def _seed(s):
    try:
        v = int(s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}")
    if not 0 <= v < 2**64:
        raise argparse.ArgumentTypeError("must be in 0 .. 2^64-1")
    return v


def _seed_list(s):
    try:
        seeds = [int(x, 0) for x in _csv("seed")(s)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed-list wants comma-separated integers, not {s!r}")
    if any(not 0 <= x < 2**64 for x in seeds):
        raise argparse.ArgumentTypeError("seeds must be in 0 .. 2^64-1")
    return seeds


def _positive(kind):
    def parse(s):
        try:
            v = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {s!r}")
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be > 0, not {s}")
        return v
    return parse


def build_parser():
    p = argparse.ArgumentParser(
        prog="tools/regress",
        description="Run a regression of the UVM-lite test programs: seeds x tests in parallel, "
                    "failure buckets, debug reruns with waves, merged coverage, junit/markdown/HTML "
                    "reports. Ends with the line 'N passed, N failed'; exit 0 only without failures.")
    sel = p.add_argument_group("what to run")
    sel.add_argument("--regression", "-r", metavar="NAME",
                     help="regression from the regressions file (smoke, coverage, nightly; default smoke)")
    sel.add_argument("--tests", type=_csv("test"), metavar="A,B,..",
                     help="comma-separated tests (with --regression: only these of it)")
    sel.add_argument("--seeds", type=_positive(int), metavar="N",
                     help="seeds per test, derived from the master seed (overrides the regression's counts)")
    sel.add_argument("--seed", type=_seed, metavar="S",
                     help="master seed (default: random, printed)")
    sel.add_argument("--seed-list", type=_seed_list, metavar="S1,S2,..", help="explicit seeds for every test")
    sel.add_argument("--build", choices=config.BUILD_MODES,
                     help="build mode for every run (default: the regression's; coverage collects coverage)")
    sel.add_argument("--timeout", type=_positive(float), metavar="SEC", help="timeout of each run")
    ex = p.add_argument_group("how to run")
    ex.add_argument("--jobs", "-j", type=_positive(int), metavar="J",
                    help=f"parallel runs of the local backend (default {DEFAULT_JOBS})")
    ex.add_argument("--budget", type=_positive(float), metavar="MIN",
                    help="stop launching runs after MIN minutes; the rest are reported as skipped")
    ex.add_argument("--fail-fast", action="store_true", help="stop launching runs after the first failure")
    ex.add_argument("--no-rerun", action="store_true", help="no debug rerun of failures")
    ex.add_argument("--resume", action="store_true",
                    help="go on with the regression in --out DIR that an earlier call stopped (budget "
                         "spent, interrupted): same plan, master seed and commit (a clean tree) "
                         "required; its finished runs are kept, the rest run now")
    ex.add_argument("--pack", metavar="FILE",
                    help="write the carry archive of the regression in --out DIR to FILE (.tar.xz) and "
                         "exit: results, result files, logs of failed runs and the finished runs' "
                         "coverage folded into a few files, to resume it elsewhere")
    ex.add_argument("--unpack", metavar="FILE",
                    help="with --resume: unpack the carry archive FILE into --out DIR (new or empty) "
                         "first")
    ex.add_argument("--out", metavar="DIR", help="output directory (default build/regress/<regression>-<timestamp>, "
                                  "with a 'latest' symlink beside it)")
    sl = p.add_argument_group("where to run")
    sl.add_argument("--backend", choices=("local", "slurm"), default="local",
                    help="local: this machine (default); slurm: a Slurm job array (the repository, "
                         "build and output directories on a file system every node sees)")
    sl.add_argument("--partition", metavar="NAME", help="slurm: partition of the array tasks")
    sl.add_argument("--time-limit", type=_positive(int), metavar="MIN",
                    help="slurm: time limit of each array task (default: the timeouts of its runs "
                         "plus 5 min)")
    sl.add_argument("--array-throttle", type=_positive(int), metavar="N",
                    help="slurm: at most N array tasks at once (default: no limit)")
    sl.add_argument("--runs-per-task", type=_positive(int), metavar="N",
                    help="slurm: runs per array task, one after another (default 8)")
    sl.add_argument("--sbatch-args", metavar="ARGS",
                    help="slurm: more sbatch arguments, e.g. '--account=verif --qos=nightly'")
    hi = p.add_argument_group("history")
    hi.add_argument("--history", metavar="FILE",
                    help="append this run's summary to FILE (JSON lines) and plot the trend in the "
                         f"report (nightly: default {HISTORY_DEFAULT_DISPLAY})")
    hi.add_argument("--no-history", action="store_true", help="no history, also for the nightly")
    bld = p.add_argument_group("programs and build")
    bld.add_argument("--build-dir", default=os.path.join(ROOT, "build"), metavar="DIR",
                     help="CMake build directory holding the programs (default build)")
    bld.add_argument("--no-build", action="store_true",
                     help="do not build the programs (default: cmake --build <build-dir> --target <program>)")
    for mode, prog in PROGRAMS.items():
        bld.add_argument(f"--prog-{mode}", default=prog, metavar="PATH",
                         help=f"{mode} program, relative to the build dir (default {prog})")
    bld.add_argument("--program", metavar="PATH", help="one program for every build mode (path; overrides --prog-*)")
    files = p.add_argument_group("inputs")
    files.add_argument("--regressions-file", default=os.path.join(ROOT, "verif", "regressions.toml"),
                       metavar="FILE", help="regression definitions (default verif/regressions.toml)")
    files.add_argument("--testplan", default=os.path.join(ROOT, "verif", "testplan.toml"), metavar="FILE",
                       help="testplan (default verif/testplan.toml; reported when it exists)")
    other = p.add_argument_group("other modes")
    other.add_argument("--testplan-only", action="store_true",
                       help="print the testplan table from the program's --list (no runs, no build)")
    other.add_argument("--list", action="store_true", help="list the regressions and exit")
    return p


# ------------------------------------------------------------------------------- planning

class Plan:
    def __init__(self, name, desc, runs, default_build, coverage_enabled):
        self.name, self.desc = name, desc
        self.specs = runs
        self.build = default_build
        self.coverage = coverage_enabled


def make_plan(args, regs):
    if args.regression:
        if args.regression not in regs:
            raise ToolError(f"unknown regression '{args.regression}' (defined: {', '.join(regs)})")
        reg = regs[args.regression]
        specs = list(reg.runs)
        if args.tests:
            have = {s.test for s in specs}
            unknown = [t for t in args.tests if t not in have]
            if unknown:
                raise ToolError(f"test '{unknown[0]}' is not in regression '{reg.name}'")
            specs = [s for s in specs if s.test in args.tests]
        name, desc, build, cov = reg.name, reg.desc, reg.build, reg.coverage
    elif args.tests:
        specs = [config.RunSpec(t, 1, DEFAULT_TIMEOUT, "fast", []) for t in args.tests]
        name, desc, build, cov = "tests", "", "fast", False
    else:
        raise ToolError("say what to run: --regression NAME or --tests a,b,c (see --list)")
    if args.build:
        build, cov = args.build, args.build == "coverage"
    out = []
    for s in specs:
        s = config.RunSpec(s.test, s.seeds, s.timeout, s.build, list(s.args))
        if args.build:
            s.build = args.build
        if args.timeout:
            s.timeout = args.timeout
        if args.seed_list:
            s.seeds = list(args.seed_list)
        elif args.seeds:
            s.seeds = args.seeds
        out.append(s)
    return Plan(name, desc, out, build, cov)


def programs(args):
    if args.program:
        path = os.path.abspath(args.program)
        return {m: path for m in PROGRAMS}
    return {m: os.path.abspath(os.path.join(args.build_dir, getattr(args, f"prog_{m}")))
            for m in PROGRAMS}


def cmake_build(build_dir, targets, log):
    """Configures build_dir if needed and builds the targets, under the machine lock."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "a") as f:
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            cmd = [LOCKED, "cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja"]
            f.write("$ " + shlex.join(cmd) + "\n")
            f.flush()
            if subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT).returncode != 0:
                return False
        cmd = [LOCKED, "cmake", "--build", build_dir, "--target"] + sorted(set(targets)) + ["-j2"]
        f.write("$ " + shlex.join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT).returncode == 0


def _tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def update_latest(out):
    note = outdir.update_latest(out)
    if note:
        print(f"regress: note: {note}")


# ------------------------------------------------------------------------------- main flow

def list_regressions(path):
    regs = config.load_regressions(path)
    for r in regs.values():
        n = sum(s.seeds if isinstance(s.seeds, int) else len(s.seeds) for s in r.runs)
        print(f"{r.name:12s} {n:5d} runs, build {r.build}{', coverage' if r.coverage else ''}"
              f"{' - ' + r.desc if r.desc else ''}")
    return 0


def testplan_only(args):
    tps = config.load_testplan(args.testplan)
    progs = programs(args)
    prog = progs[args.build or "fast"]
    listed = tpmod.list_tests(prog)
    print(f"testplan {display_path(args.testplan)} against {display_path(prog)} --list "
          f"({len(listed)} tests registered)")
    print(tpmod.format_text(tpmod.evaluate(tps, listed)))
    return 0


def run(args):
    t_start = time.monotonic()
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    regs = config.load_regressions(args.regressions_file) if (
        args.regression or os.path.exists(args.regressions_file)) else {}
    plan = make_plan(args, regs)
    tps, tp_note = None, ""
    if os.path.exists(args.testplan):
        tps = config.load_testplan(args.testplan)
    else:
        tp_note = f"No testplan ({display_path(args.testplan)} does not exist)."
    progs = programs(args)
    master = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    out = os.path.abspath(args.out) if args.out else outdir.new_run_dir(OUT_ROOT, plan.name)
    if not args.out:
        args.new_out = out        # removed again by main() if the run stops before writing to it
    logs = os.path.join(out, "logs")

    # plan -> runs; run k of a test gets derived seed k, across all entries of that test
    runs, next_index = [], {}
    for s in plan.specs:
        if isinstance(s.seeds, list):
            seeds = s.seeds
        else:
            k0 = next_index.get(s.test, 0)
            seeds = [derive_seed(master, s.test, k) for k in range(k0, k0 + s.seeds)]
            next_index[s.test] = k0 + s.seeds
        for seed in seeds:
            r = Run(len(runs), s.test, seed, s.build, progs[s.build], list(s.args), s.timeout,
                    os.path.join(logs, f"{s.test}-{seed}.log"))
            if plan.coverage and s.build == "coverage":
                r.cov_out = os.path.join(out, "cov", f"{s.test}-{seed}.dat")
                r.args.append(f"+cov_out={r.cov_out}")
                r.args.append(f"+cov_reset_out={reset_dat(r.cov_out)}")
            runs.append(r)
    seen = set()
    for r in runs:       # the same test and seed twice would share a log
        if (r.test, r.seed) in seen:
            raise ToolError(f"test {r.test} seed {r.seed} is planned twice")
        seen.add((r.test, r.seed))
    # held until the process ends: a second run with the same --out stops here
    run_lock = outdir.RunLock(out, shlex.join(["tools/regress"] + sys.argv[1:]))  # noqa: F841
    if args.unpack:
        carry.unpack(args.unpack, out)
    # the code every part of the regression ran on: the last commit outside docs/
    # (SRNIC_REGRESS_GIT_REV: tools/test only)
    rev = os.environ.get("SRNIC_REGRESS_GIT_REV") or history.code_revision()
    parts = load_resume(args, out, plan, master, runs, rev) if args.resume else []
    kept = sum(1 for r in runs if r.status != "pending")
    backend = Backend(args, out)
    print(f"regress: {plan.name}, master seed {master} (repeat this set with --seed {master}), "
          f"output {display_path(out)}", flush=True)

    modes = sorted({r.build for r in runs})
    if not args.no_build:
        targets = [os.path.basename(progs[m]) for m in modes]
        blog = os.path.join(out, "build.log")
        print(f"regress: building {', '.join(targets)} in {display_path(args.build_dir)} "
              f"(log {display_path(blog)})", flush=True)
        if not cmake_build(args.build_dir, targets, blog):
            sys.stdout.write(_tail(blog))
            raise ToolError(f"build of {', '.join(targets)} failed (log {display_path(blog)})")
    listed = {m: set(tpmod.list_tests(progs[m])) for m in modes}
    if any(r.cov_out for r in runs):
        os.makedirs(os.path.join(out, "cov"), exist_ok=True)
    todo = []
    for r in runs:
        if r.test not in listed[r.build]:
            r.status = "error"
            r.message = r.key = (f"RUNNER [NOT_REGISTERED] test {r.test} is not registered in "
                                 f"{display_path(r.program)}")
        elif r.status == "pending":
            clear_result(r)
            todo.append(r)

    print(f"regress: {len(runs)} runs ({len({r.test for r in runs})} tests), {backend.describe()}"
          + (f", budget {args.budget:g} min" if args.budget else "")
          + (f"; resuming: {kept} finished in {len(parts)} earlier part(s) kept, {len(todo)} to run" if args.resume else ""),
          flush=True)
    done = [0]
    lock = threading.Lock()
    width = len(str(len(runs)))

    def progress(r):
        with lock:
            done[0] += 1
            tag = {"pass": "PASS", "skipped": "SKIP"}.get(r.status, r.status.upper())
            msg = f"  {r.message}" if r.failed else ""
            print(f"[{done[0]:{width}d}/{len(runs)}] {tag:7s} {r.test} seed {r.seed} "
                  f"({r.duration:.1f} s){msg}", flush=True)

    todo_ix = {r.index for r in todo}
    for r in runs:
        if r.index not in todo_ix:
            progress(r)
    ex = backend.executor(budget_s=args.budget * 60 if args.budget else None,
                          fail_fast=args.fail_fast, on_done=progress)
    interrupted = False
    try:
        ex.run_all(todo)
    except KeyboardInterrupt:
        interrupted = True
        for r in runs:
            if r.status == "pending":
                r.status, r.message = "skipped", "not run: interrupted"
        print("regress: interrupted; reporting what ran", flush=True)

    # buckets, in plan order
    buckets = {}
    for r in runs:
        if r.failed:
            buckets.setdefault(r.key, []).append(r)

    reruns = {}
    if buckets and not args.no_rerun and not interrupted:
        reruns = rerun_failures(args, progs, buckets, out, backend)

    cov = None
    cin = carry.carried(out)
    if cin and not os.path.exists(cin["merged"]):
        cin = None     # a carry of runs without coverage
    if plan.coverage:
        dats = [r.cov_out for r in runs if r.cov_out and os.path.exists(r.cov_out)]
        print(f"regress: merging {len(dats)} coverage files"
              + (f" and the carried coverage of {len(cin['runs'])} runs" if cin else ""), flush=True)
        # bins are credited to the tests whose passing runs hit them
        cov = coverage.merge(dats, os.path.join(out, "coverage"), display=display_path,
                             run_tests={r.cov_out: r.test for r in runs if r.cov_out and r.status == "pass"},
                             reset_dats={d: reset_dat(d) for d in dats}, carried=cin)
        missing = [r for r in runs if r.cov_out and r.status == "pass" and not os.path.exists(r.cov_out)
                   and not (cin and (r.test, r.seed) in cin["runs"])]
        if missing:
            cov.notes.append(f"{len(missing)} passing runs wrote no coverage file "
                             f"(e.g. {missing[0].test} seed {missing[0].seed})")

    tp_status = None
    if tps is not None:
        all_listed = set().union(*listed.values()) if listed else set()
        cov_tests = None
        if cov is not None and cov.merged_dat:
            cov_tests = {r.test for r in runs if r.cov_out and r.status == "pass" and (
                os.path.exists(r.cov_out) or (cin and (r.test, r.seed) in cin["runs"]))}
        tp_status = tpmod.evaluate(tps, all_listed, runs, cov.groups if cov else None,
                                   {g: cov.group_tests(g) for g in cov.groups} if cov else None,
                                   cov_tests)

    wall = time.monotonic() - t_start
    res = results_record(args, plan, master, out, runs, buckets, reruns, cov, tp_status, tp_note,
                         wall + sum(pt["wall_s"] for pt in parts), ex.stop_reason, backend.info())
    res["started"] = started
    res["git_rev"] = rev
    res["head"] = history.git_revision()
    res["parts"] = parts + [{"started": res["started"], "wall_s": round(wall, 3), "ran": len(todo),
                             "command": res["command"], "stop_reason": ex.stop_reason}]
    if parts:
        res["started"] = parts[0]["started"]
    hfile = history_file(args, plan, out)
    if hfile and not interrupted:
        res["history"] = record_history(hfile, res, out)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    if cov is not None and cov.merged_dat:
        report.write_bins(res["coverage"], os.path.join(out, "coverage", "bins.md"))
    paths = report.write_reports(res, out, ROOT)
    if not args.out:
        update_latest(out)
    print_summary(res, buckets, cov, tp_status, paths)
    c = res["counts"]
    print(f"{c['passed']} passed, {c['failed']} failed")
    if interrupted:
        return 130
    return 0 if c["failed"] == 0 else 1


def load_resume(args, out, plan, master, runs, rev):
    """--resume: checks that out holds an earlier part of this very regression (same regression,
    master seed, planned runs and commit, clean tree) and fills in the verdicts of the runs it
    finished (their result files); returns its parts. Skipped runs stay pending."""
    if not args.out:
        raise ToolError("--resume needs --out DIR, the output directory of the regression to go on with")
    try:
        with open(os.path.join(out, "results.json")) as f:
            old = json.load(f)
    except (OSError, ValueError):
        raise ToolError(f"--resume: {display_path(out)} holds no results.json of an earlier part")
    if not rev or rev.endswith("-dirty"):
        raise ToolError(f"--resume needs a clean tree at a commit (here: {rev or 'no git revision'}): "
                        "every part of a regression must run on the same RTL and environment")
    if old.get("git_rev") != rev:
        raise ToolError(f"--resume: the earlier part ran on {old.get('git_rev') or 'an unrecorded commit'}, "
                        f"this tree is {rev}")
    if old.get("regression") != plan.name or old.get("master_seed") != master:
        raise ToolError(f"--resume: the earlier part is {old.get('regression')} with master seed "
                        f"{old.get('master_seed')}, not {plan.name} with {master}")
    planned = [(r.test, r.seed, r.build, r.reproduce()) for r in runs]
    # the output directory may have moved (a carry unpacked elsewhere): its path in the coverage
    # arguments is not part of what a run does
    was, now = old.get("out") or "", display_path(out)
    recorded = [(x.get("test"), x.get("seed"), x.get("build"),
                 (x.get("reproduce") or "").replace(was + "/", now + "/") if was else x.get("reproduce"))
                for x in old.get("runs", [])]
    if planned != recorded:
        raise ToolError("--resume: the planned runs differ from the earlier part's (other options or "
                        "regressions file)")
    for r in runs:   # verdicts are kept; skipped and not launched runs run now
        if not (read_result(r) and r.status in ("pass", "fail", "crash", "timeout")):
            r.status, r.message, r.key, r.returncode, r.duration = "pending", "", "", None, 0.0
            r.errors = r.fatals = r.warnings = 0
    return old.get("parts") or [{"started": old.get("started"), "wall_s": old.get("wall_s", 0.0),
                                 "ran": None, "command": old.get("command"),
                                 "stop_reason": old.get("stop_reason")}]


def reset_dat(cov_out):
    """The after-reset coverage snapshot written next to a run's coverage file."""
    return cov_out[:-4] + ".reset.dat" if cov_out.endswith(".dat") else cov_out + ".reset"


def rerun_failures(args, progs, buckets, out, backend):
    """Reruns the first failure of each bucket in the debug build with waves; returns
    key -> rerun record."""
    prog = progs["debug"]
    firsts = [rs[0] for rs in buckets.values() if rs[0].status != "error"]
    if not firsts:
        return {}
    note = ""
    if not args.no_build:
        blog = os.path.join(out, "build-debug.log")
        print(f"regress: building {os.path.basename(prog)} for the reruns (log {display_path(blog)})", flush=True)
        if not cmake_build(args.build_dir, [os.path.basename(prog)], blog):
            note = f"debug build failed (log {display_path(blog)})"
    if not note and not os.access(prog, os.X_OK):
        note = f"debug program {display_path(prog)} does not exist"
    recs = {}
    if note:
        print(f"regress: no reruns: {note}", flush=True)
        for r in firsts:
            recs[r.key] = {"test": r.test, "seed": r.seed, "outcome": f"not rerun: {note}",
                           "waves": "", "log": "", "reproduce": ""}
        return recs
    waves_dir = os.path.join(out, "waves")
    os.makedirs(waves_dir, exist_ok=True)
    reruns = []
    for r in firsts:
        waves = os.path.join(waves_dir, f"{r.test}-{r.seed}.fst")
        args_ = [a for a in r.args if not a.startswith(("+cov_out=", "+cov_reset_out="))] + [f"+waves={waves}"]
        rr = Run(r.index, r.test, r.seed, "debug", prog, args_, r.timeout * RERUN_TIMEOUT_FACTOR,
                 os.path.join(out, "logs", f"rerun-{r.test}-{r.seed}.log"))
        rr.extra["of"] = r
        rr.extra["waves"] = waves
        reruns.append(rr)
    print(f"regress: rerunning {len(reruns)} failure{'s' if len(reruns) != 1 else ''} "
          f"(one per bucket) in the debug build with waves", flush=True)
    for rr in reruns:
        clear_result(rr)
    backend.executor().run_all(reruns)
    for rr in reruns:
        r = rr.extra["of"]
        if not rr.failed:
            outcome = "passed (did not reproduce)"
        elif rr.key == r.key:
            outcome = "failed again, same bucket"
        else:
            outcome = f"failed differently: {rr.message}"
        waves = rr.extra["waves"]
        recs[r.key] = {"test": r.test, "seed": r.seed, "outcome": outcome,
                       "waves": display_path(waves) if os.path.exists(waves) else "",
                       "log": display_path(rr.log), "reproduce": rr.reproduce()}
        print(f"  rerun {r.test} seed {r.seed}: {outcome}", flush=True)
    return recs


def results_record(args, plan, master, out, runs, buckets, reruns, cov, tp_status, tp_note,
                   wall, stop_reason, backend):
    counts = {k: sum(1 for r in runs if r.status == k)
              for k in ("pass", "fail", "crash", "timeout", "error", "skipped")}
    counts.update(total=len(runs), passed=counts["pass"], skipped=counts["skipped"],
                  failed=sum(1 for r in runs if r.failed))
    tests = []
    for t in dict.fromkeys(r.test for r in runs):
        mine = [r for r in runs if r.test == t]
        tests.append({"test": t, "runs": len(mine), "passed": sum(r.status == "pass" for r in mine),
                      "failed": sum(r.failed for r in mine),
                      "skipped": sum(r.status == "skipped" for r in mine)})
    bl = []
    for key, rs in buckets.items():
        bl.append({"key": key, "count": len(rs), "first_message": rs[0].message,
                   "tests": sorted({r.test for r in rs}),
                   "failures": [{"test": r.test, "seed": r.seed, "status": r.status,
                                 "message": r.message, "reproduce": r.reproduce(),
                                 "log": display_path(r.log)} for r in rs],
                   "rerun": reruns.get(key)})
    bl.sort(key=lambda b: -b["count"])
    return {
        "regression": plan.name, "desc": plan.desc, "master_seed": master, "build": plan.build,
        "coverage_enabled": plan.coverage,
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "wall_s": round(wall, 3), "jobs": args.jobs, "budget_min": args.budget, "backend": backend,
        "out": display_path(out), "stop_reason": stop_reason,
        "command": shlex.join(["tools/regress"] + sys.argv[1:]),
        "counts": counts, "runs": [r.to_json() for r in runs], "buckets": bl, "tests": tests,
        "coverage": cov.to_json() if cov else None,
        "testplan": [s.to_json() for s in tp_status] if tp_status is not None else None,
        "testplan_note": tp_note,
    }


class Backend:
    """Where the runs execute: this machine (runner.Executor, --jobs at once) or a Slurm job
    array (slurm.SlurmSession). Both fill in the same Run records from the runs' result files,
    so everything after the runs (buckets, reruns, coverage, reports) is the same code."""

    def __init__(self, args, out):
        self.args = args
        self.slurm = None
        if args.backend == "slurm":
            opts = SlurmOptions(partition=args.partition or "", time_limit=args.time_limit or 0,
                                throttle=args.array_throttle or 0,
                                sbatch_args=shlex.split(args.sbatch_args or ""))
            if args.runs_per_task:
                opts.runs_per_task = args.runs_per_task
            self.slurm = SlurmSession(opts, out)

    def describe(self):
        if self.slurm:
            o = self.slurm.opts
            return f"Slurm job array, at most {o.runs_per_task} runs per task"
        return f"{self.args.jobs} jobs"

    def executor(self, budget_s=None, fail_fast=False, on_done=None):
        if self.slurm:
            return self.slurm.executor(budget_s, fail_fast, on_done)
        return Executor(self.args.jobs, budget_s=budget_s, fail_fast=fail_fast, on_done=on_done)

    def info(self):
        return self.slurm.info() if self.slurm else {"name": "local", "jobs": self.args.jobs}


def history_file(args, plan, out):
    """--history FILE; for the nightly regression <output root>/history.jsonl; else None."""
    if args.no_history:
        return None
    if args.history:
        return os.path.abspath(args.history)
    if plan.name == NIGHTLY:
        return os.path.join(os.path.dirname(out), history.HISTORY_NAME)
    return None


def record_history(path, res, out):
    """Appends the run to the history file and draws the trend; returns the report's section."""
    history.append(path, history.regress_record(res))
    recs = history.trend(history.load(path), res["regression"])
    note = history.plot(recs, res["regression"], os.path.join(out, history.PLOT_NAME))
    if note:
        print(f"regress: history: {note}", flush=True)
    return history.report_section(recs, res["regression"], display_path(path),
                                  "" if note else history.PLOT_NAME, note)


def print_summary(res, buckets, cov, tp_status, paths):
    print()
    c = res["counts"]
    if res["buckets"]:
        print(f"failure buckets ({len(res['buckets'])}):")
        for i, b in enumerate(res["buckets"], start=1):
            print(f"  {i}. [{b['count']}x] {b['key']}")
            print(f"     first: {b['first_message']}")
            if b.get("rerun"):
                rr = b["rerun"]
                print(f"     debug rerun: {rr['outcome']}" + (f", waves {rr['waves']}" if rr["waves"] else ""))
        print("reproduce (from the repository root):")
        for b in res["buckets"]:
            for f in b["failures"]:
                print(f"  {f['reproduce']}")
    if c["skipped"]:
        print(f"{c['skipped']} runs skipped: {res['stop_reason'] or 'interrupted'}")
    if cov is not None:
        print(f"line coverage (rtl/): {report.pct(cov.line_hit, cov.line_total)}; "
              f"toggle coverage (rtl/): {report.pct(cov.toggle_hit, cov.toggle_total)}; "
              f"functional coverage: {report.pct(cov.func_hit, cov.func_total)}")
        for g in cov.groups.values():
            print(f"  {g.name}: {report.pct(g.hit, g.total)}")
        for n in cov.notes:
            print(f"  note: {n}")
        if cov.html:
            print(f"  HTML: {display_path(cov.html)}")
    if tp_status is not None:
        print(tpmod.format_text(tp_status))
    print(f"reports: {', '.join(display_path(p) for p in paths.values())}")


def check_backend_args(args):
    """Slurm options only with --backend slurm, --jobs only with the local one; the Slurm
    commands must be there."""
    if args.backend == "slurm":
        if args.jobs is not None:
            raise ToolError("--jobs is for the local backend (with slurm: --array-throttle, --runs-per-task)")
        for cmd in ("sbatch", "squeue", "scancel"):
            if not shutil.which(cmd):
                raise ToolError(f"{cmd} not found: --backend slurm needs the Slurm client commands "
                                "(tools/setup --slurm installs them)")
        return
    for name in SLURM_OPTIONS:
        if getattr(args, name) is not None:
            raise ToolError(f"--{name.replace('_', '-')} needs --backend slurm")
    if args.jobs is None:
        args.jobs = DEFAULT_JOBS


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        if args.list:
            return list_regressions(args.regressions_file)
        if args.testplan_only:
            return testplan_only(args)
        if args.pack:
            if not args.out:
                raise ToolError("--pack needs --out DIR, the output directory of the regression to pack")
            print(f"regress: {carry.pack(os.path.abspath(args.out), args.pack)} into {args.pack}")
            return 0
        if args.unpack and not (args.resume and args.out):
            raise ToolError("--unpack needs --resume and --out DIR")
        if args.seed_list and args.seeds:
            raise ToolError("--seeds and --seed-list exclude each other")
        check_backend_args(args)
        if args.history and args.no_history:
            raise ToolError("--history and --no-history exclude each other")
        if not args.regression and not args.tests:
            args.regression = DEFAULT_REGRESSION
            print(f"regress: no --regression or --tests given: running '{DEFAULT_REGRESSION}'", flush=True)
        return run(args)
    except ToolError as e:
        if getattr(args, "new_out", None):
            outdir.discard_if_unused(args.new_out)
        print(f"regress: error: {e}", file=sys.stderr)
        return 2
