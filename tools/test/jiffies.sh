# jiffies prints the machine's busy and total CPU time since boot, in clock
# ticks (/proc/stat's cpu line): busy is user, nice, system, irq, softirq
# and steal; total adds idle and iowait. Sourced by .ci/run, test/e2e/e2e.sh
# and tools/test/cpu.sh, which report how busy the two cores were between
# two readings.
jiffies() {
  local _ u n s i w q sq st
  read -r _ u n s i w q sq st _ </proc/stat
  echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))"
}
