"""Coverage of a regression: every run's Verilator coverage file (.dat, SystemC::Coverage-3) is
merged with `verilator_coverage --write`, turned into lcov info with `--write-info`, and the RTL
part rendered as HTML by genhtml.

RTL coverage is computed from the merged .dat, where every point carries its kind in its page key
(`v_line/<module>`, `v_branch/<module>`, `v_toggle/<module>`, `v_user/<group>`), per .sv file
below an rtl/ directory:
  line    - line and branch points; a point counts on its line 'l' and the lines of its key
            'S' (linescov, e.g. "12-14,17"); a line is hit when every point on it has a count
            > 0 (verilator_coverage --annotate-min 1 marks exactly the other lines with '%', so
            an `if` whose `else` never ran leaves its line uncovered);
  toggle  - toggle points (one per signal bit; both directions in one point; the two NICs'
            points are merged by the writer, hier "nic*"). A Verilated model counts the settling
            of its randomised initial values and the reset as toggles, so each run also writes
            a snapshot right after reset and a point counts as covered when it changed at least
            MIN_TOGGLES (2) times after reset in one run: at least once each way on one NIC, or
            once on each NIC (without snapshots: any count > 0, flagged in the report).
The lcov info file mixes the two (`--write-info` gives a signal's declaration line the count of
its toggle points), so it is only used for the HTML.
Functional coverage counts the covergroup bins, the points whose filename is uvm_cov/<group>:
a bin is hit when its count reaches its threshold (key 's', at_least, default 1). With the
per-run files, every bin also lists the tests (and their runs) that hit it."""

import os
import shutil
import subprocess
from dataclasses import dataclass, field

FUNC_PREFIX = "uvm_cov/"


# ----------------------------------------------------------------------------- .dat files

def parse_dat(path, functional_only=False):
    """Points of a coverage .dat file: list of (keys dict, count); functional_only keeps only
    the covergroup bins (a quick scan for the per-run files)."""
    points = []
    func_key = "\x01f\x02" + FUNC_PREFIX
    with open(path, "r", errors="replace") as f:
        first = f.readline().rstrip("\n")
        if not first.startswith("# SystemC::Coverage"):
            raise ValueError(f"{path}: not a Verilator coverage file (first line {first!r})")
        for n, line in enumerate(f, start=2):
            if not line.startswith("C '") or (functional_only and func_key not in line):
                continue
            end = line.rfind("'")
            body, rest = line[3:end], line[end + 1:].strip()
            try:
                count = int(rest)
            except ValueError:
                raise ValueError(f"{path}:{n}: bad count {rest!r}") from None
            keys = {}
            for item in body.split("\x01"):
                if "\x02" in item:
                    k, v = item.split("\x02", 1)
                    keys[k] = v
            points.append((keys, count))
    return points


@dataclass
class Group:
    name: str
    bins: list = field(default_factory=list)    # (bin name, count, threshold)

    @property
    def total(self):
        return len(self.bins)

    @property
    def hit(self):
        return sum(1 for _, c, t in self.bins if c >= t)

    @property
    def percent(self):
        return 100.0 * self.hit / self.total if self.total else 0.0

    def missed(self):
        return [b for b, c, t in self.bins if c < t]


def functional_groups(points):
    """Covergroups (name -> Group) from .dat points; the same bin seen twice (unmerged files)
    has its counts added."""
    acc = {}
    for keys, count in points:
        f = keys.get("f", "")
        if not f.startswith(FUNC_PREFIX):
            continue
        group = f[len(FUNC_PREFIX):]
        name = keys.get("o") or f"bin{keys.get('l', '?')}"
        try:
            thresh = max(1, int(keys.get("s", "1")))
        except ValueError:
            thresh = 1
        slot = acc.setdefault(group, {})
        k = (keys.get("l", ""), name)
        c, t = slot.get(k, (0, thresh))
        slot[k] = (c + count, t)
    groups = {}
    for g in sorted(acc):
        items = sorted(acc[g].items(), key=lambda kv: (_int(kv[0][0]), kv[0][1]))
        groups[g] = Group(g, [(name, c, t) for (_, name), (c, t) in items])
    return groups


def per_test_bins(run_dats):
    """run_dats: {test: [.dat paths of its runs]} -> {group: {bin: {test: runs that hit it}}};
    a run hits a bin when its own count is > 0."""
    out = {}
    for test, paths in sorted(run_dats.items()):
        for path in paths:
            try:
                pts = parse_dat(path, functional_only=True)
            except (OSError, ValueError):
                continue
            for g, grp in functional_groups(pts).items():
                slot = out.setdefault(g, {})
                for name, c, _ in grp.bins:
                    per = slot.setdefault(name, {})
                    if c > 0:
                        per[test] = per.get(test, 0) + 1
    return out


def _lines(keys):
    """Lines a line/branch point counts on: its line 'l' and the lines of its 'S' key ("3-5,9"),
    as verilator_coverage --annotate attributes them."""
    spec = keys.get("S", "")
    out = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            continue
        out.update(range(a, b + 1))
    try:
        out.add(int(keys.get("l", "")))
    except ValueError:
        pass
    return out


def rtl_coverage(points):
    """(line, toggle) lists of FileCov per RTL .sv file from .dat points, by page key."""
    lines, toggles = {}, {}
    for keys, count in points:
        page = keys.get("page", "")
        kind = page.split("/", 1)[0]
        if kind not in ("v_line", "v_branch", "v_toggle"):
            continue
        name = rtl_name(keys.get("f", ""))
        if name is None:
            continue
        if kind == "v_toggle":
            t = toggles.setdefault(name, {})
            k = (keys.get("h", ""), keys.get("o", ""), keys.get("l", ""), keys.get("n", ""))
            t[k] = t.get(k, 0) + count
        else:
            f = lines.setdefault(name, {})
            for ln in _lines(keys):   # a line is covered when all of its points are
                f[ln] = min(f.get(ln, count), count)
    line = [FileCov(f, sum(1 for c in v.values() if c > 0), len(v)) for f, v in sorted(lines.items())]
    tog = [FileCov(f, sum(1 for c in v.values() if c > 0), len(v)) for f, v in sorted(toggles.items())]
    return line, tog


TOGGLE_KEY = "\x01page\x02v_toggle/"
MIN_TOGGLES = 2   # changes after reset for a toggle point to count as covered


def _toggle_counts(path):
    """Toggle points of a .dat file: {raw key text: count} (a quick scan, keys not split)."""
    out = {}
    with open(path, "r", errors="replace") as f:
        for line in f:
            if not line.startswith("C '") or TOGGLE_KEY not in line:
                continue
            end = line.rfind("'")
            try:
                out[line[3:end]] = out.get(line[3:end], 0) + int(line[end + 1:])
            except ValueError:
                continue
    return out


def toggles_after_reset(pairs):
    """pairs: [(run .dat, its snapshot right after reset)] -> per RTL file FileCov of toggle
    points that changed at least MIN_TOGGLES times after reset in one run (a Verilated model
    counts the settling of its randomised initial values and the reset itself as toggles)."""
    hit, seen = set(), set()
    for end, reset in pairs:
        try:
            e, r = _toggle_counts(end), _toggle_counts(reset)
        except OSError:
            continue
        seen.update(e)
        hit.update(k for k, c in e.items() if c - r.get(k, 0) >= MIN_TOGGLES)
    per = {}
    for k in seen:
        keys = dict(item.split("\x02", 1) for item in k.split("\x01") if "\x02" in item)
        name = rtl_name(keys.get("f", ""))
        if name is None:
            continue
        h, t = per.get(name, (0, 0))
        per[name] = (h + (k in hit), t + 1)
    return [FileCov(f, h, t) for f, (h, t) in sorted(per.items())]


def _int(s):
    try:
        return int(s)
    except ValueError:
        return 0


# ----------------------------------------------------------------------------- lcov info

def parse_info(path):
    """lcov info file -> {source path: {line: count}} (records of one source are added)."""
    files, cur = {}, None
    with open(path, "r", errors="replace") as f:
        for n, line in enumerate(f, start=1):
            line = line.strip()
            if line.startswith("SF:"):
                cur = files.setdefault(line[3:], {})
            elif line.startswith("DA:"):
                if cur is None:
                    raise ValueError(f"{path}:{n}: DA record outside a file (no SF before it)")
                parts = line[3:].split(",")
                try:
                    ln, cnt = int(parts[0]), int(parts[1])
                except (IndexError, ValueError):
                    raise ValueError(f"{path}:{n}: bad DA record {line!r}") from None
                cur[ln] = cur.get(ln, 0) + cnt
            elif line == "end_of_record":
                cur = None
    return files


def rtl_name(path):
    """'rtl/...sv' for a SystemVerilog file below an rtl/ directory, else None; the last rtl/
    component counts (.../build/mutate/mutants/rtl/x.sv -> rtl/x.sv)."""
    parts = path.replace("\\", "/").split("/")
    if not parts[-1].endswith(".sv") or "rtl" not in parts[:-1]:
        return None
    i = len(parts) - 2 - parts[-2::-1].index("rtl")
    return "/".join(parts[i:])


@dataclass
class FileCov:
    file: str
    hit: int
    total: int

    @property
    def percent(self):
        return 100.0 * self.hit / self.total if self.total else 0.0


def line_coverage(info):
    """Per-file coverage of the RTL sources in parsed info data, sorted by file (lcov's view:
    toggle points count on their signal's declaration line; rtl_coverage() separates them)."""
    per = {}
    for src, lines in info.items():
        name = rtl_name(src)
        if name is None:
            continue
        h, t = per.get(name, (0, 0))
        per[name] = (h + sum(1 for c in lines.values() if c > 0), t + len(lines))
    return [FileCov(f, h, t) for f, (h, t) in sorted(per.items())]


def functional_from_info(info):
    """Covergroup bins as the info file shows them (one DA line per bin, count > 0 = hit;
    thresholds are not in the info file, so the .dat is preferred)."""
    return {src[len(FUNC_PREFIX):]: Group(src[len(FUNC_PREFIX):],
                                         [(f"bin{ln}", c, 1) for ln, c in sorted(lines.items())])
            for src, lines in sorted(info.items()) if src.startswith(FUNC_PREFIX)}


def write_filtered_info(src, dst, keep):
    """Copies the records of src whose SF path satisfies keep(path) to dst; returns how many."""
    n, rec, take = 0, [], False
    with open(src, "r", errors="replace") as f, open(dst, "w") as out:
        for line in f:
            if line.startswith("SF:"):
                take = keep(line[3:].strip())
                rec = []
            if take:
                rec.append(line)
            if line.strip() == "end_of_record":
                if take:
                    out.writelines(rec)
                    n += 1
                take, rec = False, []
    return n


# ----------------------------------------------------------------------------- merge

@dataclass
class CoverageResult:
    merged_dat: str = ""
    merged_info: str = ""
    html: str = ""
    files: list = field(default_factory=list)       # FileCov: lines (line and branch points)
    toggles: list = field(default_factory=list)     # FileCov: toggle points
    groups: dict = field(default_factory=dict)      # name -> Group
    bin_tests: dict = field(default_factory=dict)   # group -> bin -> test -> runs that hit it
    toggle_basis: str = ""                          # what a covered toggle point means here
    inputs: int = 0
    notes: list = field(default_factory=list)

    @property
    def line_hit(self):
        return sum(f.hit for f in self.files)

    @property
    def line_total(self):
        return sum(f.total for f in self.files)

    @property
    def toggle_hit(self):
        return sum(f.hit for f in self.toggles)

    @property
    def toggle_total(self):
        return sum(f.total for f in self.toggles)

    def group_tests(self, group):
        """Tests that hit at least one bin of the group: {test: most runs hitting one bin}."""
        out = {}
        for per in self.bin_tests.get(group, {}).values():
            for t, n in per.items():
                out[t] = max(out.get(t, 0), n)
        return out

    @property
    def func_hit(self):
        return sum(g.hit for g in self.groups.values())

    @property
    def func_total(self):
        return sum(g.total for g in self.groups.values())

    def to_json(self):
        return {
            "inputs": self.inputs, "merged_dat": self.merged_dat, "merged_info": self.merged_info,
            "html": self.html, "notes": self.notes,
            "line": {"hit": self.line_hit, "total": self.line_total,
                     "files": [{"file": f.file, "hit": f.hit, "total": f.total} for f in self.files]},
            "toggle": {"hit": self.toggle_hit, "total": self.toggle_total, "basis": self.toggle_basis,
                       "files": [{"file": f.file, "hit": f.hit, "total": f.total} for f in self.toggles]},
            "functional": {"hit": self.func_hit, "total": self.func_total,
                           "groups": [{"name": g.name, "hit": g.hit, "total": g.total,
                                       "missed": g.missed(), "tests": self.group_tests(g.name),
                                       "bins": [{"bin": b, "count": c, "at_least": t,
                                                 "tests": self.bin_tests.get(g.name, {}).get(b, {})}
                                                for b, c, t in g.bins]}
                                      for g in self.groups.values()]},
        }


def _run(cmd, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode


def merge(dat_files, out_dir, display=lambda p: p, tool="verilator_coverage", genhtml="genhtml",
          run_tests=None, reset_dats=None, carried=None):
    """Merges the .dat files into out_dir (merged.dat, merged.info, rtl.info, html/) and
    computes line, toggle and functional coverage. run_tests: {dat path: test name} to list
    the tests that hit each covergroup bin (default: none); reset_dats: {dat path: its
    after-reset snapshot}: toggles are then counted after reset only (toggles_after_reset);
    carried: the coverage of runs folded into a carry (tools/regresslib/carry.py), merged in too.
    Problems go to notes; a failed merge leaves the result empty."""
    os.makedirs(out_dir, exist_ok=True)
    res = CoverageResult(inputs=len(dat_files) + (len(carried["runs"]) if carried else 0))
    log = os.path.join(out_dir, "coverage.log")
    extra = [carried["merged"]] if carried else []
    if not dat_files and not extra:
        res.notes.append("no run wrote a coverage file")
        return res
    if shutil.which(tool) is None:
        res.notes.append(f"{tool} not found: coverage not merged")
        return res
    merged = os.path.join(out_dir, "merged.dat")
    info = os.path.join(out_dir, "merged.info")
    if carried and os.path.abspath(carried["merged"]) == os.path.abspath(merged):
        raise ValueError("the carried coverage must not be the merge's output")
    if _run([tool, "--write", merged] + list(dat_files) + extra, log) != 0 or not os.path.exists(merged):
        res.notes.append(f"{tool} --write failed (see {display(log)})")
        return res
    res.merged_dat = merged
    points = parse_dat(merged)
    res.groups = functional_groups(points)
    res.files, res.toggles = rtl_coverage(points)
    del points
    pairs = [(d, (reset_dats or {}).get(d)) for d in dat_files]
    pairs = [(d, r) for d, r in pairs if r and os.path.exists(r)]
    n_runs = len(pairs)
    if carried and os.path.exists(carried["toggles"]):
        pairs.append((carried["toggles"], carried["empty"]))
        n_runs += len(carried["runs"])
    if pairs:
        res.toggles = toggles_after_reset(pairs)
        res.toggle_basis = f"changed at least {MIN_TOGGLES} times after reset in one run ({n_runs} runs)"
    elif res.toggles:
        res.toggle_basis = "changed at least once (counts include the reset and initial values: no after-reset snapshots)"
    if run_tests:
        by_test = {}
        for path, test in run_tests.items():
            if path in dat_files:
                by_test.setdefault(test, []).append(path)
        res.bin_tests = per_test_bins(by_test)
    if carried:
        from .carry import add_bins
        res.bin_tests = add_bins(res.bin_tests, carried["bins"])
    if _run([tool, "--write-info", info, merged], log) != 0 or not os.path.exists(info):
        res.notes.append(f"{tool} --write-info failed (see {display(log)})")
        return res
    res.merged_info = info
    if not res.files:
        res.notes.append("no RTL line coverage points (rtl/*.sv) in the merged coverage")
        return res
    rtl_info = os.path.join(out_dir, "rtl.info")
    write_filtered_info(info, rtl_info, lambda p: rtl_name(p) is not None)
    if shutil.which(genhtml) is None:
        res.notes.append("genhtml not found: no HTML coverage report")
        return res
    html = os.path.join(out_dir, "html")
    glog = os.path.join(out_dir, "genhtml.log")
    rc = _run([genhtml, "--quiet", "--ignore-errors", "source", "--title", "srnic RTL coverage",
               "--output-directory", html, rtl_info], glog)
    if rc == 0 and os.path.exists(os.path.join(html, "index.html")):
        res.html = os.path.join(html, "index.html")
    else:
        res.notes.append(f"genhtml failed (exit {rc}, see {display(glog)}); numbers above are unaffected")
    return res
