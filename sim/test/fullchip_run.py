#!/usr/bin/python3
"""Full-chip test runner: runs srnic-sim --json once per message size and checks the result.

usage: fullchip_run.py SRNIC_SIM [--sizes LIST] [srnic-sim options...]

LIST is comma-separated; each item may be N, N-1 or N+1 (e.g. 0,1,1024-1,1024+1,65536). Every
run must report data_ok, no errors, completions equal to the count computed here from the
options, no protocol or bus violations and, on a link without impairments, no retransmits (NIC
counter or wire). With --expect-recovery (a lossy link), the link must have lost frames and the
NIC must have resent (retransmits > 0), so the run cannot pass without exercising recovery.
With --expect-cache (srnic-sim-cached, the `cached` build) the sending NIC's WQE cache must have
served some reads, missed some and prefetched (its counters), so the run goes through the cache;
without it those counters must be 0 (the cache-free design has no cache). With --expect-weir
(passes --weir on) the JSON must hold the weir object, Weir must have rung every posted WR
(slices counted), held some doorbells back for their credit, and cut WRITE/READ WRs longer than
its 4 KiB slice. With --expect-window (a small --window) a sending NIC must have stopped a QP for
credit (counter TX_WINDOW_WAIT), so the in-flight cap acted."""

import json
import subprocess
import sys


def opt(args, names, default):
    """The value of the first of `names` (an option and its perftest aliases) in args."""
    for name in names.split(","):
        if name in args:
            return args[args.index(name) + 1]
    return default


def expected_completions(args):
    """The completions the options call for; None for -D (the run decides how many it posts)."""
    if "-D" in args:
        return None
    qps = int(opt(args, "--qps,-q", "1"))
    iters = int(opt(args, "--iters,-n", "100"))
    op = opt(args, "--op", "write")
    every = int(opt(args, "--signal-every,-Q", "1"))
    signaled = -(-iters // every)  # every Nth WR and the last one
    n = qps * (signaled + (iters if op == "send" else 0))
    if ("--latency" in args and op != "read") or "-b" in args:
        n *= 2  # ping-pong or bidirectional: both hosts send
    return n


def take_flag(args, name):
    """Whether name is in args; removes it (the flags this runner reads are not srnic-sim's)."""
    if name not in args:
        return False
    args.remove(name)
    return True


def size_list(spec):
    out = []
    for item in spec.split(","):
        if "+" in item:
            a, b = item.split("+")
            out.append(int(a) + int(b))
        elif "-" in item:
            a, b = item.split("-")
            out.append(int(a) - int(b))
        else:
            out.append(int(item))
    return out


def run_one(sim, args, recovery=False, cache=False, weir=False, window=False):
    cmd = [sim, "--json"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    line = " ".join(cmd)
    problems = []
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        return [f"{line}: exit {p.returncode}, stdout is not one JSON object; stderr: {p.stderr.strip()}"]
    want = expected_completions(args)
    if want is None:  # -D: every WR it posted must complete, and it must have posted some
        want = r["expected_completions"]
        if r["messages"] == 0 or r["posted"] < r["messages"]:
            problems.append(f"-D run: {r['messages']} messages within the duration, {r['posted']} posted")
    if p.returncode != 0:
        problems.append(f"exit status {p.returncode}")
    if r["data_ok"] is not True:
        problems.append(f"data_ok false ({r.get('failure')}; {r.get('scoreboard')})")
    if r["completions"] != want:
        problems.append(f"completions {r['completions']}, expected {want}")
    if r["errors"] != 0:
        problems.append(f"errors {r['errors']}")
    if r["protocol_violations"] != 0:
        problems.append(f"protocol violations {r['protocol_violations']}: {r['first_protocol_violation']}")
    if r["bus_violations"] != 0:
        problems.append(f"bus violations {r['bus_violations']}, first: {r.get('first_bus_violation')}")
    if not r["impairments"]["active"]:
        # On a clean link nothing is sent twice: neither by the NIC's count nor on the wire.
        if r["retransmits"] != 0:
            problems.append(f"retransmits {r['retransmits']} on a clean link")
        if r["wire_retransmits"] != 0:
            problems.append(f"wire_retransmits {r['wire_retransmits']} on a clean link")
    if recovery:
        lost = sum(v for k, v in r["impairments"].get("stats", {}).items() if k.startswith("lost")) \
            if isinstance(r["impairments"].get("stats"), dict) else None
        if r["retransmits"] == 0:
            problems.append("no retransmits on a lossy link: recovery was not exercised")
        if lost == 0:
            problems.append("the link lost nothing")
    wc = {k: dict(r["hosts"][0]["counters"]).get("WQE_CACHE_" + k, 0) for k in ("HIT", "MISS", "PREFETCH")}
    if cache and not (wc["HIT"] > 0 and wc["MISS"] > 0 and wc["PREFETCH"] > 0):
        problems.append(f"WQE cache counters {wc}: the run did not go through the cache")
    if not cache and any(wc.values()):
        problems.append(f"WQE cache counters {wc} in a build without the cache")
    if weir:
        w = r.get("weir")
        size = int(opt(args, "--size,-s", "65536"))
        sliced = opt(args, "--op", "write") in ("write", "read") and size > 4096
        if not isinstance(w, dict):
            problems.append("no weir object in the JSON")
        else:
            if w["wqes_rung"] != w["posted"] + w["slices"]:
                problems.append(f"weir rang {w['wqes_rung']} WQEs for {w['posted']} WRs and {w['slices']} slices")
            if w["deferred"] == 0:
                problems.append(f"weir deferred no doorbell: the pacing did not act ({w})")
            if sliced and w["slices"] == 0:
                problems.append(f"weir cut no {size}-byte WR into slices")
            if w["active_qps"] != 0:
                problems.append(f"weir still counts {w['active_qps']} active QPs at the end")
    waits = sum(dict(h["counters"]).get("TX_WINDOW_WAIT", 0) for h in r["hosts"])
    if window and waits == 0:
        problems.append(f"no QP waited for credit (TX_WINDOW_WAIT 0) with --window {opt(args, '--window', '?')}")
    if "--latency" in args and (r["latency_us"] is None or r["latency_us"]["p50"] <= 0):
        problems.append("no latency figures")
    # JSON schema 2: labelled hosts, structured scoreboard, one per_qp entry per QP.
    if r.get("schema_version") != 2:
        problems.append(f"schema_version {r.get('schema_version')}, expected 2")
    if [h.get("name") for h in r.get("hosts", [])] != ["host0", "host1"]:
        problems.append("hosts are not labelled host0, host1")
    if not isinstance(r.get("scoreboard"), dict) or r["scoreboard"].get("mismatches") != 0:
        problems.append(f"scoreboard {r.get('scoreboard')}")
    nq = 1 if "--latency" in args else int(opt(args, "--qps,-q", "1"))
    if len(r.get("per_qp", [])) != nq or not 0 < r.get("fairness", {}).get("jain_index", 0) <= 1:
        problems.append(f"per_qp has {len(r.get('per_qp', []))} entries for {nq} QPs, fairness {r.get('fairness')}")
    status = "ok" if not problems else "FAIL"
    print(f"{status}: {line}: goodput {r['goodput_gbps']:.2f} Gb/s, {r['completions']} completions, "
          f"{r['sim_cycles']} cycles, {r['wall_s']:.1f} s")
    return [f"{line}: {m}" for m in problems]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    sim, args = sys.argv[1], sys.argv[2:]
    sizes = None
    recovery, cache, window, weir = (take_flag(args, "--expect-" + f) for f in ("recovery", "cache", "window", "weir"))
    if weir:
        args.append("--weir")
    if "--sizes" in args:
        i = args.index("--sizes")
        sizes = size_list(args[i + 1])
        del args[i:i + 2]
    runs = [args + ["--size", str(s)] for s in sizes] if sizes else [args]
    problems = []
    for a in runs:
        problems += run_one(sim, a, recovery, cache, weir, window)
    for m in problems:
        print("FAIL: " + m, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
