"""Results of tools/interop/run: results.json and results.md of one output folder, and the
totals of a set of runs. A run record (from tools/interop/run's one_run) holds name, tool, op,
size, mtu, initiator, iters, frames, rxe_retransmits, srnic (srnic-interop's JSON result),
wall_s, status (pass | fail | error), why (what failed; empty when it passed) and note."""

import json
import os

STATUSES = ("pass", "fail", "error")


def status(r):
    """A record's status; records without one are pass or fail by their 'pass' flag."""
    return r.get("status") or ("pass" if r.get("pass") else "fail")


def totals(results, planned=None):
    """Counts: total (planned runs), passed, failed, errors and not_run (planned but not run,
    e.g. after the guest died)."""
    c = {s: sum(1 for r in results if status(r) == s) for s in STATUSES}
    n = len(results) if planned is None else planned
    return {"total": n, "passed": c["pass"], "failed": c["fail"], "errors": c["error"],
            "not_run": max(0, n - len(results))}


def verdict(t, aborted=""):
    if t["failed"] or t["errors"] or aborted:
        return "FAILED"
    if t["not_run"]:
        return "INCOMPLETE"
    return "PASSED" if t["total"] else "NO RUNS"


def totals_line(t):
    return (f"{t['total']} runs: {t['passed']} passed, {t['failed']} failed, {t['errors']} errors"
            + (f", {t['not_run']} not run" if t["not_run"] else ""))


def _cell(v):
    return str(v).replace("\n", " ").replace("|", "\\|")


def _lost(s):
    im = s.get("impairments") or {}
    return f"{im.get('lost_to_nic', 0)}, {im.get('lost_to_guest', 0)}" if im else "-"


def render_md(results, info):
    """results.md: verdict and totals, then one row per run with its result and, for a run
    that did not pass, the reason."""
    t = totals(results, info.get("planned"))
    out = ["# Interop results", "",
           f"**{verdict(t, info.get('aborted', ''))}**: {totals_line(t)}", ""]
    if info.get("aborted"):
        out += [f"Aborted: {_cell(info['aborted'])}", ""]
    meta = []
    for k, label in (("started", "started"), ("seed", "seed"), ("command", "command")):
        if info.get(k) not in (None, ""):
            meta.append(f"{label} `{info[k]}`")
    im = info.get("impairments") or {}
    if any(im.values()):
        meta.append("wire impairments each direction: " + ", ".join(f"{k} {v:g}" for k, v in im.items()))
    times = info.get("times") or {}
    if times:
        meta.append(", ".join(f"{k[:-2]} {v:.1f} s" for k, v in times.items() if k.endswith("_s")))
    if meta:
        out += ["; ".join(meta), ""]
    out.append("| run | tool | op | size | MTU | initiator | iters | frames | lost (to srnic, to guest) | "
               "rxe retransmits | sim us | guest s | wall s | result | reason | note |")
    out.append("|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
    for r in results:
        s = r.get("srnic") or {}
        st = status(r)
        out.append(f"| {_cell(r['name'])} | {r['tool']} | {r['op']} | {r['size']} | {r['mtu']} | "
                   f"{r['initiator']} | {r['iters']} | {r['frames']} | {_lost(s)} | {r['rxe_retransmits']} | "
                   f"{s.get('sim_us', 0):.0f} | {s.get('guest_run_s', 0):.2f} | {r['wall_s']:.1f} | "
                   f"{'PASS' if st == 'pass' else st.upper()} | "
                   f"{_cell(r.get('why', '')) if st != 'pass' else ''} | {_cell(r.get('note', ''))} |")
    total = f"{t['passed']} PASS, {t['failed']} FAIL, {t['errors']} ERROR"
    if t["not_run"]:
        total += f", {t['not_run']} not run"
    out.append(f"| total | | | | | | | | | | | | | {total} | | |")
    return "\n".join(out) + "\n"


def write_reports(results, out, info):
    """results.json (info, totals, runs) and results.md in out; returns their paths."""
    t = totals(results, info.get("planned"))
    rec = dict(info, totals=t, verdict=verdict(t, info.get("aborted", "")), runs=results)
    paths = (os.path.join(out, "results.json"), os.path.join(out, "results.md"))
    with open(paths[0], "w") as f:
        json.dump(rec, f, indent=1)
    with open(paths[1], "w") as f:
        f.write(render_md(results, info))
    return paths
