#!/usr/bin/env bash
# check_pcap.sh: checks a pcap of RoCEv2 traffic with three independent decoders.
#   1. roce-pcap-check (our packet library): decode, ICRC, PSN order, opcode sequences, lengths.
#   2. scapy (sw/roce/tools/scapy_icrc_check.py): ICRC of every IPv4 RoCE frame.
#   3. tshark: every frame decodes as InfiniBand BTH; opcodes, destination QPNs and PSNs as expected.
# Steps 2 and 3 are skipped with a message when scapy or tshark is missing, unless
# SRNIC_REQUIRE_DECODERS=1 (CI sets it: .ci/run), which makes a missing decoder a failure.
#
# usage: tools/check_pcap.sh [--mtu N] [--op write|read|send] [--qpns Q,Q,...]
#                            [--psns QPN:PSN,...] [--frames N] [--allow-retransmit]
#                            [--roce-pcap-check PATH] FILE.pcap
#   --qpns    destination QPNs that may appear (default: any)
#   --psns    first request PSN expected per destination QPN
#   --frames  exact number of frames expected in the file
#   --allow-retransmit  a lossy wire: go-back-N may move a flow's PSN back (requests resent,
#             READs re-requested from a later PSN, ACKs answering duplicates); still checked:
#             decoding, ICRC, lengths, opcode sequences, and that PSNs never jump forward
# Exit status 0 all checks passed, 1 a check failed, 2 usage error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mtu=4096 op="" qpns="" psns="" frames="" checker="" retrans=""
while [[ $# -gt 1 ]]; do
  case "$1" in
    --mtu) mtu=$2; shift 2 ;;
    --op) op=$2; shift 2 ;;
    --qpns) qpns=$2; shift 2 ;;
    --psns) psns=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --roce-pcap-check) checker=$2; shift 2 ;;
    --allow-retransmit) retrans=1; shift ;;
    *) echo "check_pcap.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -eq 1 ]] || { echo "usage: check_pcap.sh [options] FILE.pcap" >&2; exit 2; }
pcap=$1
[[ -r "$pcap" ]] || { echo "check_pcap.sh: cannot read $pcap" >&2; exit 2; }

if [[ -z "$checker" ]]; then
  checker=$(command -v roce-pcap-check || true)
  [[ -n "$checker" ]] || checker="$root/build/sw/roce/roce-pcap-check"
fi
[[ -x "$checker" ]] || { echo "check_pcap.sh: roce-pcap-check not found (build it or pass --roce-pcap-check)" >&2; exit 2; }

fail=0
echo "== roce-pcap-check --mtu $mtu ${retrans:+--allow-retransmit }$pcap"
"$checker" --mtu "$mtu" ${retrans:+--allow-retransmit} "$pcap" || fail=1

if /usr/bin/python3 -c "import scapy.contrib.roce" 2>/dev/null; then
  echo "== scapy ICRC"
  /usr/bin/python3 "$root/sw/roce/tools/scapy_icrc_check.py" "$pcap" || fail=1
else
  if [[ "${SRNIC_REQUIRE_DECODERS:-}" == 1 ]]; then
    echo "== scapy ICRC: FAIL: python3 scapy not installed (SRNIC_REQUIRE_DECODERS=1)"; fail=1
  else
    echo "== scapy ICRC: SKIPPED (python3 scapy not installed)"
  fi
fi

if command -v tshark >/dev/null 2>&1; then
  echo "== tshark decode"
  err=$(mktemp)
  trap 'rm -f "$err" "$err.fields"' EXIT
  fields=$(tshark -r "$pcap" --disable-protocol rpcordma -T fields -e frame.number -e infiniband.bth.opcode \
             -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.reth.dmalen 2>"$err") || {
    echo "tshark failed: $(cat "$err")"; exit 1; }
  # the fields go through a file: a large capture's fields exceed the limit of one argument or
  # environment string
  printf '%s\n' "$fields" > "$err.fields"
  /usr/bin/python3 - "$op" "$mtu" "$qpns" "$psns" "$frames" "$retrans" "$err.fields" <<'EOF' || fail=1
import sys
op, mtu, qpns, psns, frames = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
retrans = sys.argv[6] == "1"
with open(sys.argv[7]) as fh:
    field_lines = fh.read().splitlines()
def back(psn, ref):  # psn lies before ref (24-bit serial order)
    return psn != ref and ((ref - psn) & 0xFFFFFF) < (1 << 23)
allowed = {"write": {6, 7, 8, 10, 17}, "send": {0, 1, 2, 4, 17}, "read": {12, 13, 14, 15, 16, 17}}.get(op)
qpn_set = {int(q, 0) for q in qpns.split(",")} if qpns else None
first_psn = {int(k, 0): int(v, 0) for k, v in (x.split(":") for x in psns.split(","))} if psns else {}
def num(s):
    s = s.split(",")[0]
    return int(s, 0)
problems, n, next_req, last_resp, seen_first = [], 0, {}, {}, set()
def bad(msg):
    if len(problems) < 10:
        print("  " + msg)
    problems.append(msg)
for line in field_lines:
    if not line.strip():
        continue
    n += 1
    f = line.split("\t") + [""] * 5
    no = f[0]
    if not (f[1] and f[2] and f[3]):
        bad(f"frame {no}: does not decode as RoCE (fields {f[1:4]})")
        continue
    opc, dqp, psn = num(f[1]), num(f[2]), num(f[3])
    if allowed is not None and opc not in allowed:
        bad(f"frame {no}: opcode {opc} not expected for {op}")
    if qpn_set is not None and dqp not in qpn_set:
        bad(f"frame {no}: destination QPN {dqp:#x} not one of the run's QPs")
    if opc <= 12:  # requests
        if dqp not in next_req:
            if dqp in first_psn and psn != first_psn[dqp]:
                bad(f"frame {no}: first request PSN to QP {dqp:#x} is {psn}, expected {first_psn[dqp]}")
        elif psn != next_req[dqp] and not (retrans and back(psn, next_req[dqp])):
            bad(f"frame {no}: request PSN {psn} to QP {dqp:#x}, expected {next_req[dqp]}")
        step = 1
        if opc == 12:
            length = num(f[4]) if f[4] else 0
            step = max(1, -(-length // mtu))
        next_req[dqp] = (psn + step) & 0xFFFFFF
        seen_first.add(dqp)
    else:  # responses: READ responses advance by one, ACKs never go back
        prev = last_resp.get(dqp)
        if prev is not None:
            d = (psn - prev) & 0xFFFFFF
            if retrans and (d == 0 or d >= 1 << 23):
                pass  # a response again (a duplicate answered, a READ re-requested)
            elif opc in (14, 15) and d != 1:
                bad(f"frame {no}: READ response PSN {psn} to QP {dqp:#x} after {prev}")
            elif d >= 1 << 23:
                bad(f"frame {no}: response PSN {psn} to QP {dqp:#x} goes back from {prev}")
        last_resp[dqp] = psn
missing = [q for q in first_psn if q not in seen_first]
if missing:
    bad("no requests seen to QPs " + ", ".join(hex(q) for q in missing))
if frames and n != int(frames):
    bad(f"{n} frames in the file, expected {frames}")
print(f"  tshark: {n} frames, {len(problems)} problems")
sys.exit(1 if problems else 0)
EOF
else
  if [[ "${SRNIC_REQUIRE_DECODERS:-}" == 1 ]]; then
    echo "== tshark decode: FAIL: tshark not installed (SRNIC_REQUIRE_DECODERS=1)"; fail=1
  else
    echo "== tshark decode: SKIPPED (tshark not installed)"
  fi
fi

if [[ $fail -ne 0 ]]; then echo "check_pcap.sh: FAIL"; exit 1; fi
echo "check_pcap.sh: PASS"
