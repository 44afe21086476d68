#!/usr/bin/env bash
# Measures what a command costs the machine (docs/development.md, "Where
# make test's CPU goes"): its wall seconds, the whole machine's busy and
# idle CPU-seconds over it (/proc/stat), and, with process accounting
# (accton, Debian's acct: as root), the CPU-seconds of every process that
# ended meanwhile, summed by command: the `ceph` CLI processes of a test
# group, the linker's runs, the API servers its tests started.
#
# usage: tools/test/cpu.sh COMMAND...   (e.g. tools/test/cpu.sh make test-integration)
set -uo pipefail
# shellcheck source=jiffies.sh
. "$(dirname "$0")/jiffies.sh"
pacct=
if command -v accton >/dev/null && pacct=$(mktemp) && accton "$pacct" >/dev/null; then :; else pacct=; fi
read -r b0 a0 < <(jiffies); s=$(date +%s.%N)
"$@"; rc=$?
read -r b1 a1 < <(jiffies); e=$(date +%s.%N)
hz=$(getconf CLK_TCK)
if [[ -n $pacct ]]; then
  accton off >/dev/null
  echo "=== CPU-seconds of the processes that ended, by command (the 15 largest)"
  lastcomm -f "$pacct" | awk '{ for (i = 1; i <= NF; i++) if ($i == "secs") t = $(i - 1); c[$1] += t; n[$1]++ }
    END { for (k in c) printf "%8.1f %6d  %s\n", c[k], n[k], k }' | sort -rn | sed -n 1,15p
  rm -f "$pacct"
fi
echo "=== rc=$rc wall=$(awk -v s="$s" -v e="$e" 'BEGIN{printf "%.0f", e - s}') s, machine busy $(((b1 - b0) / hz)) CPU-s, idle $(((a1 - a0 - b1 + b0) / hz)) CPU-s"
exit "$rc"
