"""TOML inputs of the regression tools, loaded and validated: verif/regressions.toml,
verif/testplan.toml and verif/mutations.toml. Every problem is a ToolError naming the file, the
entry and the key; unknown keys are errors too, so a misspelt key never goes unnoticed."""

import re
import tomllib
from dataclasses import dataclass, field

from . import ToolError

BUILD_MODES = ("fast", "coverage", "debug")
STAGES = ("V1", "V2", "V3")
MUTANT_CLASSES = ("comparison", "off_by_one", "dropped_transition", "swapped_field",
                  "wrong_constant", "inverted_logic", "dropped_assignment", "dropped_check")
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


def load_toml(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ToolError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ToolError(f"{path}: TOML syntax error: {e}") from None


class _Checker:
    """Type checks with messages of the form '<file>: <where>: <problem>'."""

    def __init__(self, path):
        self.path = path

    def fail(self, where, msg):
        raise ToolError(f"{self.path}: {where}: {msg}")

    def keys(self, where, table, required, optional):
        if not isinstance(table, dict):
            self.fail(where, "must be a table")
        for k in required:
            if k not in table:
                self.fail(where, f"missing key '{k}'")
        unknown = sorted(set(table) - set(required) - set(optional))
        if unknown:
            allowed = ", ".join(sorted(set(required) | set(optional)))
            self.fail(where, f"unknown key '{unknown[0]}' (allowed: {allowed})")

    def string(self, where, key, v, nonempty=True):
        if not isinstance(v, str) or (nonempty and not v.strip()):
            self.fail(where, f"'{key}' must be a non-empty string")
        return v

    def str_list(self, where, key, v, nonempty=True):
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            self.fail(where, f"'{key}' must be a list of non-empty strings")
        if nonempty and not v:
            self.fail(where, f"'{key}' must not be empty")
        if len(set(v)) != len(v):
            self.fail(where, f"'{key}' lists a name twice")
        return v

    def positive(self, where, key, v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            self.fail(where, f"'{key}' must be a positive number")
        return v

    def choice(self, where, key, v, choices):
        if v not in choices:
            self.fail(where, f"'{key}' must be one of {', '.join(choices)}, not {v!r}")
        return v


# ------------------------------------------------------------------------------- regressions

@dataclass
class RunSpec:
    test: str
    seeds: object            # int (count, derived from the master seed) or list of fixed seeds
    timeout: float
    build: str
    args: list = field(default_factory=list)


@dataclass
class Regression:
    name: str
    desc: str
    build: str
    coverage: bool
    timeout: float
    runs: list


def parse_regressions(data, path="regressions.toml"):
    ck = _Checker(path)
    if not data:
        ck.fail("top level", "no regression defined")
    regs = {}
    for name, t in data.items():
        where = f"regression '{name}'"
        if not NAME_RE.match(name):
            ck.fail(where, "name may only hold letters, digits, '_', '.' and '-'")
        ck.keys(where, t, ["runs"], ["desc", "build", "coverage", "timeout"])
        build = ck.choice(where, "build", t.get("build", "fast"), BUILD_MODES)
        coverage = t.get("coverage", build == "coverage")
        if not isinstance(coverage, bool):
            ck.fail(where, "'coverage' must be true or false")
        if coverage and build != "coverage":
            ck.fail(where, f"coverage = true needs build = \"coverage\" (build is \"{build}\")")
        timeout = ck.positive(where, "timeout", t.get("timeout", 600))
        desc = t.get("desc", "")
        if not isinstance(desc, str):
            ck.fail(where, "'desc' must be a string")
        runs = t["runs"]
        if not isinstance(runs, list) or not runs:
            ck.fail(where, "'runs' must be a non-empty list of {test, seeds, ...} tables")
        specs = []
        for i, r in enumerate(runs):
            rw = f"{where}: runs[{i}]"
            ck.keys(rw, r, ["test"], ["seeds", "timeout", "build", "args"])
            test = ck.string(rw, "test", r["test"])
            seeds = r.get("seeds", 1)
            if isinstance(seeds, bool) or not (
                    (isinstance(seeds, int) and seeds >= 1) or
                    (isinstance(seeds, list) and seeds and
                     all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64
                         for s in seeds))):
                ck.fail(rw, "'seeds' must be a count >= 1 or a non-empty list of seeds (0 .. 2^64-1)")
            rbuild = ck.choice(rw, "build", r.get("build", build), BUILD_MODES)
            rtimeout = ck.positive(rw, "timeout", r.get("timeout", timeout))
            args = r.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) and a for a in args):
                ck.fail(rw, "'args' must be a list of strings (extra arguments, e.g. \"+name=value\")")
            specs.append(RunSpec(test, seeds, float(rtimeout), rbuild, list(args)))
        regs[name] = Regression(name, desc, build, coverage, float(timeout), specs)
    return regs


def load_regressions(path):
    return parse_regressions(load_toml(path), path)


# ---------------------------------------------------------------------------------- testplan

@dataclass
class Testpoint:
    name: str
    stage: str
    desc: str
    tests: list
    covergroups: list
    needs_coverage: bool = False   # passing also needs this run's coverage of its tests


def parse_testplan(data, path="testplan.toml"):
    ck = _Checker(path)
    ck.keys("top level", data, ["testpoint"], [])
    tps = data["testpoint"]
    if not isinstance(tps, list) or not tps:
        ck.fail("top level", "'testpoint' must be a non-empty array of tables ([[testpoint]])")
    out, seen = [], set()
    for i, t in enumerate(tps):
        where = f"testpoint[{i}]"
        ck.keys(where, t, ["name", "stage", "desc", "tests"], ["covergroups", "needs_coverage"])
        name = ck.string(where, "name", t["name"])
        where = f"testpoint '{name}'"
        if name in seen:
            ck.fail(where, "defined twice")
        seen.add(name)
        stage = ck.choice(where, "stage", t["stage"], STAGES)
        desc = ck.string(where, "desc", t["desc"])
        tests = ck.str_list(where, "tests", t["tests"])
        cgs = ck.str_list(where, "covergroups", t.get("covergroups", []), nonempty=False)
        needs_cov = t.get("needs_coverage", False)
        if not isinstance(needs_cov, bool):
            ck.fail(where, "'needs_coverage' must be true or false")
        out.append(Testpoint(name, stage, desc, tests, cgs, needs_cov))
    return out


def load_testplan(path):
    return parse_testplan(load_toml(path), path)


# --------------------------------------------------------------------------------- mutations

@dataclass
class Mutant:
    name: str
    cls: str
    file: str
    find: str
    replace: str
    line: int = 0            # hint, 0 = none
    desc: str = ""


def parse_mutations(data, path="mutations.toml"):
    ck = _Checker(path)
    ck.keys("top level", data, ["mutant"], [])
    ms = data["mutant"]
    if not isinstance(ms, list) or not ms:
        ck.fail("top level", "'mutant' must be a non-empty array of tables ([[mutant]])")
    out, seen = [], set()
    for i, m in enumerate(ms):
        where = f"mutant[{i}]"
        ck.keys(where, m, ["name", "class", "file", "find", "replace"], ["line", "desc"])
        name = ck.string(where, "name", m["name"])
        where = f"mutant '{name}'"
        if not NAME_RE.match(name):
            ck.fail(where, "name may only hold letters, digits, '_', '.' and '-'")
        if name in seen:
            ck.fail(where, "defined twice")
        seen.add(name)
        cls = ck.choice(where, "class", m["class"], MUTANT_CLASSES)
        file = ck.string(where, "file", m["file"])
        if not file.startswith("rtl/") or ".." in file.split("/"):
            ck.fail(where, f"'file' must be a path below rtl/, not {file!r}")
        find = ck.string(where, "find", m["find"])
        replace = m["replace"]
        if not isinstance(replace, str):
            ck.fail(where, "'replace' must be a string")
        if replace == find:
            ck.fail(where, "'replace' equals 'find': the mutant changes nothing")
        line = m.get("line", 0)
        if isinstance(line, bool) or not isinstance(line, int) or line < 0:
            ck.fail(where, "'line' must be a line number")
        desc = m.get("desc", "")
        if not isinstance(desc, str):
            ck.fail(where, "'desc' must be a string")
        out.append(Mutant(name, cls, file, find, replace, line, desc))
    return out


def load_mutations(path):
    return parse_mutations(load_toml(path), path)
