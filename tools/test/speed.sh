#!/usr/bin/env bash
# Prints how fast one core of this machine is today, as one fixed piece of
# work timed: a CPU-bound Python loop (the local OpenStack's services are
# Python) and a compression of a fixed buffer (as a compile is, integer work
# over memory), each the best of three, in milliseconds.
#
# Why: the same commit's .ci/run took 1,200 s on one day and about 2,500 s
# on another on a machine of the same kind, with no steal time in
# /proc/stat; the toolchain alone 1,118 s one day and 2,387 s
# another. A figure taken before anything else runs tells a run's slower
# day from slower code (docs/development.md, "What the first run costs").
#
# usage: tools/test/speed.sh   (about six seconds on an idle machine)
set -euo pipefail
best() { # COMMAND...: the fastest of three runs, in ms
  local b= s e t
  for _ in 1 2 3; do
    s=$(date +%s%N)
    "$@" >/dev/null
    e=$(date +%s%N)
    t=$(((e - s) / 1000000))
    if [[ -z $b || $t -lt $b ]]; then b=$t; fi
  done
  echo "$b"
}
py=$(best /usr/bin/python3 -c 'sum(i * i for i in range(3000000))')
# 32 MiB of a fixed pseudo-random text (the same bytes on every machine),
# written once; gzip then reads it from the page cache.
buf=$(mktemp)
trap 'rm -f "$buf"' EXIT
/usr/bin/python3 -c '
import random, sys
r = random.Random(51)
w = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9))) for _ in range(4096)]
out = bytearray()
while len(out) < 32 << 20:
    out += r.choice(w) + b" "
sys.stdout.buffer.write(out[:32 << 20])' >"$buf"
gz=$(best gzip -6 -c "$buf")
echo "one core: python loop ${py} ms, gzip of 32 MiB ${gz} ms (best of 3; lower is faster)"
