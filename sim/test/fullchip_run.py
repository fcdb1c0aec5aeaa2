#!/usr/bin/python3
"""Full-chip test runner: runs srnic-sim --json once per message size and checks the result.

usage: fullchip_run.py SRNIC_SIM [--sizes LIST] [srnic-sim options...]

LIST is comma-separated; each item may be N, N-1 or N+1 (e.g. 0,1,1024-1,1024+1,65536). Every
run must report data_ok, no errors, completions equal to the count computed here from the
options, no protocol or bus violations and, on a link without impairments, no retransmits (NIC
counter or wire). With --expect-recovery (a lossy link), the link must have lost frames and the
NIC must have resent (retransmits > 0), so the run cannot pass without exercising recovery."""

import json
import subprocess
import sys


def opt(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def expected_completions(args):
    qps = int(opt(args, "--qps", "1"))
    iters = int(opt(args, "--iters", "100"))
    op = opt(args, "--op", "write")
    every = int(opt(args, "--signal-every", "1"))
    signaled = -(-iters // every)  # every Nth WR and the last one
    n = qps * (signaled + (iters if op == "send" else 0))
    if "--latency" in args and op != "read":
        n *= 2  # ping-pong: both hosts send
    return n


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


def run_one(sim, args, recovery=False):
    cmd = [sim, "--json"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    line = " ".join(cmd)
    problems = []
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        return [f"{line}: exit {p.returncode}, stdout is not one JSON object; stderr: {p.stderr.strip()}"]
    want = expected_completions(args)
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
    if "--latency" in args and (r["latency_us"] is None or r["latency_us"]["p50"] <= 0):
        problems.append("no latency figures")
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
    recovery = "--expect-recovery" in args
    if recovery:
        args.remove("--expect-recovery")
    if "--sizes" in args:
        i = args.index("--sizes")
        sizes = size_list(args[i + 1])
        del args[i:i + 2]
    runs = [args + ["--size", str(s)] for s in sizes] if sizes else [args]
    problems = []
    for a in runs:
        problems += run_one(sim, a, recovery)
    for m in problems:
        print("FAIL: " + m, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
