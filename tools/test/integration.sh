#!/usr/bin/env bash
# Runs the integration tests (make test-integration): every package's
# `Integration` tests, with the provider's split by the service they drive.
#
# Serially the provider's package is the long pole of make test (1300 s of
# about 1500 at stop 49): its OpenStack, Ceph and OVN tests wait on three
# services that do not share state. Here they run as four `go test`
# processes (OpenStack in two) beside the other packages, each with its own API server and
# provider (provider/integration's TestMain), so the package takes about as
# long as its longest group. Each group's output is printed whole when it
# ends (a passing provider group's summary only, as go test shows a
# package); the run fails if any group fails.
#
# The node agents' module runs its Integration tests after them (the
# Makefile): tried as one more job beside them (2026-11-30), the whole took
# 631 s instead of about 600, the agents' 194 s of Ceph and libvirt tests
# lengthening the long pole (the first OpenStack group, 618 s instead of
# 523): the two cores are busy throughout, so more at once is not faster.
#
# usage: tools/test/integration.sh CEPH_TAGS PACKAGES...
set -uo pipefail
tags=$1; shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export REQUIRE_INTEGRATION=1
provider=./provider/integration
# The other packages: only those with an Integration test. go test links a
# test binary for every package it is given (two CPU-seconds each, no build
# cache keeps it), and 22 of the 47 packages with tests have none to run
# here: linking them took about 55 of the group's 330 CPU-seconds
# (2026-11-30, process accounting).
others=()
while read -r p dir; do
  case $p in */provider/integration) continue ;; esac
  if grep -qsE '^func (Test|Example|Fuzz)[A-Za-z0-9_]*Integration' "$dir"/*_test.go; then others+=("$p"); fi
done < <(go list -f '{{.ImportPath}} {{.Dir}}' "$@")
# Test binaries are linked without DWARF (-w): a quarter less link time,
# and nothing here runs a debugger on them (stack traces keep their
# symbols). Compiled packages are cached the same either way.
ldflags=-ldflags=-w

# The provider's tests are compiled once and the binary run three times, in
# the package's directory as go test runs it.
go test -c "$ldflags" -tags "$tags" -o "$out/provider.test" "$provider" || exit 1

declare -A pids=()
job() { # NAME DIR COMMAND...: in the background, its output and seconds kept
  local n=$1 dir=$2; shift 2
  ( s=$SECONDS; cd "$dir" && "$@"; rc=$?; echo $((SECONDS - s)) >"$out/$n.secs"; exit $rc ) >"$out/$n.log" 2>&1 &
  pids[$n]=$!
}
# The OpenStack tests were the long pole alone (877-921 s serially), mostly
# waiting on the provider's polls: they run as two processes, each test's
# objects named by its process's own run suffix. Every test not named in the
# first group runs in the second, so a new test is never left out. The first
# holds Lifecycle (about 400 s, its kinds in parallel) and
# ManyProviderConfigs (160 s): at stop 60 it took 664 s and the second 433 s,
# the first running alone on idle cores for its last 200 s, so
# ShootKubeconfig and SteadyStatePolls (95 s) moved to the second.
openstack_a='Integration(Lifecycle|BadInput|Catalog|ManyProviderConfigs)'
run=(-test.count=1 -test.timeout=30m -test.v)
# The fault suite's Ceph cases (make faults) run with the Ceph tests.
job provider-ceph "$provider" "$out/provider.test" "${run[@]}" -test.run 'IntegrationCeph|FaultCeph'
# The OpenStack case of the fault suite (about 100 s, mostly its outage)
# runs beside the OVN tests, the shortest group.
job provider-ovn "$provider" "$out/provider.test" "${run[@]}" -test.run 'IntegrationOVN|FaultOpenStack'
job provider-openstack-a "$provider" "$out/provider.test" "${run[@]}" -test.run "$openstack_a"
job provider-openstack-b "$provider" "$out/provider.test" "${run[@]}" -test.run 'Integration' -test.skip "IntegrationCeph|FaultCeph|IntegrationOVN|$openstack_a"
job packages . go test "$ldflags" -tags "$tags" -count=1 -timeout 30m -run 'Integration' "${others[@]}"

# The Ceph group's binary has died three times in 30 runs (stops 73, 75 and
# 83) on a signal from a librados thread (free(): invalid pointer, or a
# segmentation fault), as its tests' clusters lost monitors or were stopped,
# with no Go stack; serializing the making and shutting down of librados
# connections (provider/internal/clients/ceph, Lifecycle) did not end it, and
# its cause is not found yet (docs/development.md). A binary killed by a
# signal runs again once, for the tests it had not passed, saying so: a test
# that fails, or a second crash, still fails the run.
rerun_crashed() { # NAME: the group's tests that had not passed, run again after its crash
  local n=$1 passed skip
  passed=$(sed -nE 's/^--- PASS: (Test[A-Za-z0-9_]+) .*/\1/p' "$out/$n.log" | paste -sd'|')
  skip=${passed:+^($passed)\$}
  echo "--- $n: its test binary died on a signal (exit $2), the known librados crash (docs/development.md); its tests that had not passed run again: everything but ${passed:-nothing}; the end of its log:"
  tail -5 "$out/$n.log"
  mv "$out/$n.log" "$out/$n-crashed.log"
  # What the dead binary started, its API servers and etcd, now children of
  # init, stops too (its tests' Ceph clusters are stopped by the tests that
  # run again); the other groups' are children of their live binaries.
  pkill -P 1 -f '/envtest-v|/gardener-v' || true
  job "$n" "$provider" "$out/provider.test" "${run[@]}" -test.run 'IntegrationCeph|FaultCeph' ${skip:+-test.skip "$skip"}
  wait "${pids[$n]}"
}

rc=0
for n in packages provider-openstack-a provider-openstack-b provider-ceph provider-ovn; do
  if wait "${pids[$n]}"; then r=ok; else
    c=$?
    r=FAIL
    if [[ $n == provider-ceph && $c -gt 128 ]] && rerun_crashed "$n" "$c"; then r='ok (run again after a crash, above)'; fi
    [[ $r == FAIL ]] && rc=1
  fi
  echo "--- $n: $r in $(cat "$out/$n.secs" 2>/dev/null || echo '?') s"
  # As go test shows a package: all of it when it failed; else its summary
  # (the provider's binary goes on logging while its API server stops).
  # Each top-level test's time is kept (--- PASS: TestX (12.34s)).
  [[ -f $out/$n-crashed.log ]] && grep -E '^--- PASS' "$out/$n-crashed.log"
  if [[ $r == FAIL || $n == packages ]]; then cat "$out/$n.log"; else grep -E '^(PASS|ok|SKIP|--- (SKIP|PASS))' "$out/$n.log"; fi
done
exit $rc
