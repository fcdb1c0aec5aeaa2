#!/usr/bin/python3
"""Full-chip test of srnic-sim's data checks: they must be able to fail.

usage: fullchip_faults.py SRNIC_SIM

For each op, a run with more iterations than buffer slots passes clean; then the same run with
a harness-level fault on one message of QP 0 (--inject-fault) must fail with data_ok false, exit
status 1 and a failure that names the message:
  corrupt   one destination byte flipped after placement
  lost      the destination restored to its earlier contents (the message was never placed)
  misplace  the message posted with its destination 64 bytes off
Posted-write reordering across AXI IDs must pass (the NIC issues every write with ID 0); with
every write free to pass every other, the CQE of a SEND overtakes its payload and the
completion-before-data check must say so. A DMA error response (--pcie-error) must stop the run
with the fatal NIC named, and nothing stray or out of protocol."""

import json
import subprocess
import sys

BASE = ["--size", "2048", "--qps", "2", "--iters", "40", "--mtu", "1024", "--tx-depth", "8"]
AT = 13  # iteration of QP 0 that gets the fault (slot 13 % 8 = 5, reused twice before)


def run(sim, args):
    cmd = [sim, "--json"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        r = None
    return " ".join(cmd), p.returncode, r, p.stderr


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    sim = sys.argv[1]
    problems = []

    def expect(args, ok, needles):
        line, rc, r, err = run(sim, args)
        if r is None:
            problems.append(f"{line}: exit {rc}, stdout is not JSON; stderr: {err.strip()}")
            return
        why = r.get("failure") or ""
        got = f"data_ok {r['data_ok']}, exit {rc}, failure: {why}"
        bad = []
        if ok:
            if r["data_ok"] is not True or rc != 0:
                bad.append("expected a clean run")
            if r["data_checked_messages"] != r["messages"] or r["cqe_data_checks"] < r["messages"]:
                bad.append(f"only {r['data_checked_messages']} / {r['cqe_data_checks']} of {r['messages']} messages checked")
            if r["dma_stray_writes"] != 0 or r["dma_write_bytes_checked"] == 0:
                bad.append("DMA write check did not run clean")
        else:
            if r["data_ok"] is not False or rc != 1:
                bad.append("expected data_ok false and exit status 1")
            for n in needles:
                if n not in why:
                    bad.append(f"failure does not mention '{n}'")
        print(("ok" if not bad else "FAIL") + f": {line}: {got}")
        problems.extend(f"{line}: {b} ({got})" for b in bad)

    for op in ("write", "read", "send"):
        args = ["--op", op] + BASE
        expect(args, True, [])
        at = ["--inject-at", str(AT)]
        where = f"QP 0 (QPN"
        it = f"iteration {AT} slot {AT % 8}"
        expect(args + ["--inject-fault", "corrupt"] + at, False, ["data: ", where, it, "1 of 2048 bytes differ"])
        expect(args + ["--inject-fault", "lost"] + at, False,
               ["data: ", it, f"still iteration {AT - 8}'s (message not placed)"])
        # The NIC writes 64 bytes past the slot: into the next slot (a message may be in flight
        # there), so the CQE check or the DMA range check fires, whichever sees it first.
        expect(args + ["--inject-fault", "misplace"] + at, False, [it, "+64 bytes from the slot: misplaced"])
        expect(args + ["--pcie-reorder-writes"], True, [])
    expect(["--op", "send"] + BASE + ["--pcie-reorder-all-writes"], False, ["completion before data: host 1 CQE"])
    # A stray DMA write: misplace the last message of a QP whose next slot holds no message.
    expect(["--op", "write", "--size", "2048", "--qps", "1", "--iters", "8", "--tx-depth", "8",
            "--inject-fault", "misplace", "--inject-at", "7"], False,
           ["DMA write to host 1 at", "bytes, at", "in the guard after QP 0's destination slots"])

    # A DMA error response makes the NIC fatal (decision 108): the run stops with the fatal error
    # named (not a watchdog), only that host reports it, every DMA write that did land was in a
    # permitted region, and nothing after the error reached the wire (no protocol violation).
    def expect_fatal(args, host, needles, counter):
        line, rc, r, err = run(sim, args)
        if r is None:
            problems.append(f"{line}: exit {rc}, stdout is not JSON; stderr: {err.strip()}")
            return
        why = r.get("failure") or ""
        got = f"data_ok {r['data_ok']}, exit {rc}, failure: {why}"
        bad = []
        if r["data_ok"] is not False or rc != 1:
            bad.append("expected data_ok false and exit status 1")
        for n in [f"host {host}'s NIC is fatal: "] + needles:
            if n not in why:
                bad.append(f"failure does not mention '{n}'")
        if "watchdog" in why:
            bad.append("reported as a watchdog")
        fatal = [h["nic_fatal"] for h in r["hosts"]]
        if not fatal[host] or fatal[1 - host] is not None:
            bad.append(f"nic_fatal per host {fatal}")
        if (r["hosts"][host]["counters"] or {}).get(counter, 0) < 1:
            bad.append(f"{counter} of host {host} is 0")
        if r["dma_stray_writes"] != 0:
            bad.append(f"{r['dma_stray_writes']} stray DMA writes")
        if r["protocol_violations"] != 0:
            bad.append(f"{r['protocol_violations']} protocol violations")
        print(("ok" if not bad else "FAIL") + f": {line}: {got}")
        problems.extend(f"{line}: {b} ({got})" for b in bad)

    expect_fatal(["--op", "write"] + BASE + ["--pcie-error", "read:nth=60"], 0,
                 ["PCIe read error (SLVERR) on AXI ID"], "PCIE_RD_ERR")
    expect_fatal(["--op", "send"] + BASE + ["--pcie-error", "write:rate=0.05:decerr", "--pcie-error-host", "1"], 1,
                 ["PCIe write error (DECERR)"], "PCIE_WR_ERR")
    expect_fatal(["--op", "read"] + BASE + ["--pcie-error", "read:rate=0.02"], 0,
                 ["PCIe read error (SLVERR)"], "PCIE_RD_ERR")

    for m in problems:
        print("FAIL: " + m, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
