"""Carrying a stopped regression to another machine (tools/regress --pack / --unpack).

An output directory holds two coverage files per run (a few MB each), too much to move for a
regression of thousands of runs. A carry archive holds instead what resuming and reporting
need: results.json, every finished run's result file, the logs of the runs that did not pass,
and the coverage of the finished runs folded into three files under carry/:

  merged.dat    the merged coverage of every run with a coverage file (and of any earlier carry)
  toggles.dat   every RTL toggle point seen, with count MIN_TOGGLES if it changed at least that
                often after reset in one run, else 0 (so the after-reset toggle figure of the
                runs still to come can be added to it)
  carry.json    the runs folded in (test, seed), and per covergroup bin the tests whose runs hit
                it with their run counts

`tools/regress --resume --unpack FILE --out DIR` unpacks the archive into DIR and goes on; the
coverage merge then reads carry/ beside the new runs' files."""
import json
import os
import shutil
import tarfile
import tempfile

from . import ToolError, coverage
from .runner import result_path

CARRY_DIR = "carry"
MERGED = "merged.dat"
TOGGLES = "toggles.dat"
EMPTY = "empty.dat"
INFO = "carry.json"
FINISHED = ("pass", "fail", "crash", "timeout")


def carried(out):
    """The carry of out (unpacked), or None: {'dir', 'merged', 'toggles', 'empty', 'runs': set of
    (test, seed), 'bins': {group: {bin: {test: runs}}}}."""
    d = os.path.join(out, CARRY_DIR)
    try:
        with open(os.path.join(d, INFO)) as f:
            info = json.load(f)
    except (OSError, ValueError):
        return None
    return {"dir": d, "merged": os.path.join(d, MERGED), "toggles": os.path.join(d, TOGGLES),
            "empty": os.path.join(d, EMPTY), "runs": {(t, s) for t, s in info.get("runs", [])},
            "bins": info.get("bins", {})}


def add_bins(a, b):
    """Sum of two {group: {bin: {test: runs}}} tables."""
    out = {g: {k: dict(v) for k, v in bins.items()} for g, bins in a.items()}
    for g, bins in b.items():
        slot = out.setdefault(g, {})
        for name, per in bins.items():
            s = slot.setdefault(name, {})
            for t, n in per.items():
                s[t] = s.get(t, 0) + n
    return out


def _write_toggles(path, pairs, earlier):
    """toggles.dat from (run .dat, reset snapshot) pairs plus an earlier carry's toggles.dat."""
    hit, seen = set(), set()
    for end, reset in pairs + ([(earlier, None)] if earlier else []):
        e = coverage._toggle_counts(end)
        r = coverage._toggle_counts(reset) if reset else {}
        seen.update(e)
        hit.update(k for k, c in e.items() if c - r.get(k, 0) >= coverage.MIN_TOGGLES)
    with open(path, "w") as f:
        f.write("# SystemC::Coverage-3\n")
        for k in sorted(seen):
            f.write(f"C '{k}' {coverage.MIN_TOGGLES if k in hit else 0}\n")
    return len(hit), len(seen)


def pack(out, archive):
    """Writes the carry archive of the regression in out; returns a one-line summary."""
    try:
        with open(os.path.join(out, "results.json")) as f:
            res = json.load(f)
    except (OSError, ValueError):
        raise ToolError(f"--pack: {out} holds no results.json")
    runs = res.get("runs", [])
    finished = [r for r in runs if r.get("status") in FINISHED]
    earlier = carried(out)
    cov = res.get("coverage") or {}
    with tempfile.TemporaryDirectory() as tmp:
        cdir = os.path.join(tmp, CARRY_DIR)
        os.makedirs(cdir)
        folded, pairs = [], []
        for r in finished:
            dat = r.get("cov_out") and os.path.join(out, "cov", os.path.basename(r["cov_out"]))
            if dat and os.path.exists(dat):
                folded.append([r["test"], r["seed"]])
                rs = dat[:-4] + ".reset.dat"
                pairs.append((dat, rs if os.path.exists(rs) else None))
        if earlier:
            folded += [list(k) for k in sorted(earlier["runs"])]
        merged = os.path.join(out, "coverage", "merged.dat")
        if folded and not os.path.exists(merged):
            raise ToolError(f"--pack: {out} has coverage files but no coverage/merged.dat (the regression "
                            "did not finish its report)")
        if folded:
            shutil.copy(merged, os.path.join(cdir, MERGED))
            hits, total = _write_toggles(os.path.join(cdir, TOGGLES), pairs, earlier and earlier["toggles"])
            with open(os.path.join(cdir, EMPTY), "w") as f:
                f.write("# SystemC::Coverage-3\n")
        else:
            hits = total = 0
        bins = {}
        for g in (cov.get("functional") or {}).get("groups", []):
            bins[g["name"]] = {b["bin"]: dict(b.get("tests") or {}) for b in g["bins"]}
        with open(os.path.join(cdir, INFO), "w") as f:
            json.dump({"runs": folded, "bins": bins, "toggles_after_reset": [hits, total],
                       "regression": res.get("regression"), "master_seed": res.get("master_seed"),
                       "git_rev": res.get("git_rev")}, f, indent=1)
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(os.path.join(out, "results.json"), arcname="results.json")
            for r in finished:
                log = os.path.join(out, "logs", f"{r['test']}-{r['seed']}.log")
                rp = result_path(log)
                if os.path.exists(rp):
                    tar.add(rp, arcname=os.path.relpath(rp, out))
                if r.get("status") != "pass" and os.path.exists(log):
                    tar.add(log, arcname=os.path.relpath(log, out))
            tar.add(cdir, arcname=CARRY_DIR)
    return (f"packed {len(finished)} finished of {len(runs)} runs, coverage of {len(folded)} runs "
            f"({os.path.getsize(archive) / 1e6:.1f} MB)")


def unpack(archive, out):
    """Unpacks a carry archive into out, which must not hold a regression yet."""
    if os.path.exists(os.path.join(out, "results.json")):
        raise ToolError(f"--unpack: {out} already holds a regression (results.json)")
    os.makedirs(out, exist_ok=True)
    try:
        with tarfile.open(archive, "r:xz") as tar:
            for m in tar.getmembers():
                if m.name.startswith("/") or ".." in m.name.split("/") or not (m.isfile() or m.isdir()):
                    raise ToolError(f"--unpack: {archive}: unexpected member {m.name!r}")
            tar.extractall(out)
    except (OSError, tarfile.TarError) as e:
        raise ToolError(f"--unpack: {archive}: {e}")
    if carried(out) is None:
        raise ToolError(f"--unpack: {archive} is not a carry archive (no {CARRY_DIR}/{INFO})")
