#!/usr/bin/env bash
# Counts the requests every Shoot cluster's API server of the running demo
# serves over SECONDS (default 60), summed over the Shoots by verb and
# resource: the difference of two readings of apiserver_request_total.
# Run it beside local/demo/idle.sh to see what a part's CPU buys
# (docs/benchmarks.md, "The operator stand-in through informers"):
#
#   local/demo/shoot-requests.sh [SECONDS]
set -euo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
SECONDS_MEASURED=${1:-60}
compgen -G "$RUN/shoots/*.kubeconfig" >/dev/null || { echo "no Shoot clusters in $RUN/shoots: run make demo first" >&2; exit 1; }
cd "$(dirname "$0")/../.."
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"

# counts prints "COUNT<TAB>VERB RESOURCE[/SUBRESOURCE]" summed over every Shoot.
counts() {
  local k
  for k in "$RUN"/shoots/*.kubeconfig; do
    "$KUBECTL" --kubeconfig "$k" get --raw /metrics 2>/dev/null | grep '^apiserver_request_total' || true
  done | /usr/bin/python3 -c '
import collections, re, sys
c = collections.Counter()
for line in sys.stdin:
    m = re.match(r"apiserver_request_total\{(.*)\} (\S+)", line)
    if not m:
        continue
    l = dict(re.findall(r"(\w+)=\"([^\"]*)\"", m.group(1)))
    c[l.get("verb", "") + " " + l.get("resource", "") + ("/" + l["subresource"] if l.get("subresource") else "")] += float(m.group(2))
for k, v in c.items():
    print(f"{v}\t{k}")
'
}

before=$(counts)
sleep "$SECONDS_MEASURED"
after=$(counts)
/usr/bin/python3 - "$SECONDS_MEASURED" <(echo "$before") <(echo "$after") <<'PY'
import sys
secs = float(sys.argv[1])
read = lambda f: {k: float(v) for v, k in (l.rstrip("\n").split("\t", 1) for l in open(f) if "\t" in l)}
a, b = read(sys.argv[2]), read(sys.argv[3])
d = sorted(((b[k] - a.get(k, 0), k) for k in b), reverse=True)
total = sum(x for x, _ in d)
print(f"the Shoots' API servers: {total:.0f} requests in {secs:.0f} s ({total / secs:.1f}/s)")
for x, k in d[:12]:
    print(f"  {x:6.0f}  {k}")
PY
