"""Regression history: one JSON line per regression (nightly runs, and any run given --history)
and per tools/mutate run given --history, appended to a history file (default
build/regress/history.jsonl); the report shows the trend of the regression as a plot
(history.png, drawn with matplotlib when it is installed) and a table."""

import datetime
import json
import math
import os
import subprocess

from . import ROOT

HISTORY_NAME = "history.jsonl"
PLOT_NAME = "history.png"
TABLE_ROWS = 20          # the report's table shows this many of the latest records


def git_revision(root=ROOT):
    """Short commit of the working tree, with '-dirty' when tracked files differ from it."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=30).stdout.strip()
        if rev and subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=root,
                                  capture_output=True, timeout=30).returncode == 1:
            rev += "-dirty"
        return rev
    except (OSError, subprocess.TimeoutExpired):
        return ""


def code_revision(root=ROOT):
    """The last commit that changed anything a regression's runs depend on: everything but docs/
    and the regression runner itself (tools/regress, tools/regresslib/, their tests in
    tools/test/), with '-dirty' when tracked files outside those differ from HEAD. Evidence
    committed between the parts of a resumed regression, and a runner that learns to carry or
    report it, leave it the same; the runs themselves are compared command by command when a
    regression is resumed."""
    spec = ["--", ".", ":(exclude)docs", ":(exclude)tools/regress", ":(exclude)tools/regresslib",
            ":(exclude)tools/test"]
    try:
        rev = subprocess.run(["git", "log", "-1", "--format=%h"] + spec, cwd=root, capture_output=True,
                             text=True, timeout=30).stdout.strip()
        if rev and subprocess.run(["git", "diff", "--quiet", "HEAD"] + spec, cwd=root,
                                  capture_output=True, timeout=30).returncode == 1:
            rev += "-dirty"
        return rev
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _now():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _pct(d):
    return round(100.0 * d["hit"] / d["total"], 2) if d and d.get("total") else None


def regress_record(res):
    """The history line of a regression, from its results record."""
    c, cov = res["counts"], res.get("coverage")
    return {"kind": "regress", "date": res["started"], "regression": res["regression"],
            "git_rev": git_revision(), "master_seed": res["master_seed"],
            "backend": res.get("backend", {}).get("name", "local"),
            "runs": c["total"], "passed": c["passed"], "failed": c["failed"], "skipped": c["skipped"],
            "line_pct": _pct(cov["line"]) if cov else None,
            "toggle_pct": _pct(cov.get("toggle")) if cov else None,
            "functional_pct": _pct(cov["functional"]) if cov else None,
            "wall_s": res["wall_s"], "out": res["out"]}


def mutate_record(regression, seed, killed, total, wall_s, out):
    return {"kind": "mutate", "date": _now(), "regression": regression, "git_rev": git_revision(),
            "seed": seed, "mutants": total, "killed": killed,
            "kill_rate_pct": round(100.0 * killed / total, 2) if total else None,
            "wall_s": round(wall_s, 3), "out": out}


def append(path, rec):
    """Appends one line (a single write to a file opened for appending)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")


def load(path):
    """The records of a history file, oldest first; lines that are not JSON objects are skipped."""
    recs = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("kind") in ("regress", "mutate") and rec.get("date"):
                    recs.append(rec)
    except FileNotFoundError:
        pass
    return recs


def trend(recs, regression):
    """The records a regression's report shows: its own runs and every mutation run."""
    return [r for r in recs if r["kind"] == "mutate" or r.get("regression") == regression]


def plot(recs, regression, path):
    """Draws the trend (runs passed and failed; line, toggle and functional coverage and the
    kill rate; wall time) into path; returns '' or why there is no plot."""
    runs = [r for r in recs if r["kind"] == "regress"]
    if len(runs) < 2:
        return "the trend plot starts with the second run in the history"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (tools/setup installs it)"

    # x: the regression runs in file order, evenly spaced; a mutation run half-way between the
    # regression runs it came between
    pos, n = [], 0
    for r in recs:
        pos.append(n if r["kind"] == "regress" else n - 0.5)
        n += r["kind"] == "regress"
    x = [p for p, r in zip(pos, recs) if r["kind"] == "regress"]
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
    ax1.plot(x, [r["passed"] for r in runs], "o-", color="tab:green", label="passed")
    ax1.plot(x, [r["failed"] for r in runs], "o-", color="tab:red", label="failed")
    ax1.set_ylabel("runs")
    ax1.set_ylim(bottom=0)
    ax1.legend(loc="best", fontsize="small")
    pct_values = []
    for key, label, color in (("line_pct", "line (rtl/)", "tab:blue"),
                              ("toggle_pct", "toggle (rtl/)", "tab:orange"),
                              ("functional_pct", "functional", "tab:purple")):
        pts = [(xi, r[key]) for xi, r in zip(x, runs) if r.get(key) is not None]
        if pts:
            pct_values += [p[1] for p in pts]
            ax2.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=label)
    kills = [(p, r["kill_rate_pct"]) for p, r in zip(pos, recs)
             if r["kind"] == "mutate" and r.get("kill_rate_pct") is not None]
    if kills:
        pct_values += [k[1] for k in kills]
        ax2.plot([k[0] for k in kills], [k[1] for k in kills], "s--", color="black", label="kill rate")
    if pct_values:
        ax2.legend(loc="best", fontsize="small")
    else:
        ax2.text(0.5, 0.5, "no coverage collected, no mutation runs", ha="center", va="center",
                 transform=ax2.transAxes, color="gray")
    ax2.set_ylabel("coverage, kill rate (%)")
    ax2.set_ylim(max(0, 10 * math.floor((min(pct_values, default=0) - 5) / 10)), 100)   # zoomed on the data
    ax3.plot(x, [r["wall_s"] / 60 for r in runs], "o-", color="tab:gray")
    ax3.set_ylabel("wall time (min)")
    ax3.set_ylim(bottom=0)
    step = max(1, math.ceil(len(runs) / 10))         # at most ~10 labelled runs
    ticks = list(range(0, len(runs), step))
    ax3.set_xticks([x[i] for i in ticks])
    ax3.set_xticklabels([f"{runs[i]['date'][5:16].replace('T', ' ')}\n{runs[i].get('git_rev', '')}"
                         for i in ticks], fontsize="small")
    fig.suptitle(f"regression {regression}: {len(runs)} runs in the history")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return ""


def report_section(recs, regression, history_file, plot_file, note):
    """The results-record part the report renders (see report.build_document)."""
    rows = recs[-TABLE_ROWS:]
    return {"file": history_file, "plot": plot_file, "note": note,
            "records": sum(1 for r in recs if r["kind"] == "regress"), "rows": rows,
            "regression": regression}
