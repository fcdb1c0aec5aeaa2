#!/usr/bin/env bash
# locked.sh: run a command holding the shared Verilator lock (one Verilator build at a time on
# the machine). Runs the command directly when an ancestor process already holds the lock
# (e.g. `flock /tmp/srnic-verilator.lock make test`), when SRNIC_VERILATOR_LOCK is empty, or
# when flock is not installed.
set -euo pipefail
lock="${SRNIC_VERILATOR_LOCK-/tmp/srnic-verilator.lock}"
if [[ -z "$lock" ]] || ! command -v flock >/dev/null 2>&1; then
  exec "$@"
fi
touch "$lock" 2>/dev/null || exec "$@"

held_by_ancestor() {
  local ino holders pid
  ino=$(stat -L -c %i "$lock") || return 1
  holders=$(awk -v ino="$ino" '{ n = split($6, f, ":"); if (f[n] == ino) print $5 }' /proc/locks 2>/dev/null) || return 1
  [[ -n "$holders" ]] || return 1
  pid=$$
  while [[ "$pid" -gt 1 ]]; do
    for h in $holders; do [[ "$h" == "$pid" ]] && return 0; done
    pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null) || return 1
  done
  return 1
}

if held_by_ancestor; then
  exec "$@"
fi
exec flock "$lock" "$@"
