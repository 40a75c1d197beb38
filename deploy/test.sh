#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, check that the committed
# protoc-c output is fresh and the code is formatted, build (our own code must have no
# warnings), run a seconds-long smoke of the benchmark harness, build the micro-benchmarks'
# package, run every Swift test and each fuzz target for a few seconds, validate the deploy kit
# offline, and run the browser tests of receipts-web.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
proto/check-generated.sh
swift format lint --strict -r Sources Tests Benchmarks/Benchmarks
# Runs a build (the arguments after the first two), showing its output, and fails on a warning
# in a file whose path matches the first argument (dependencies' warnings are theirs).
build_without_warnings() {
  local own_code=$1 what=$2 build_log
  shift 2
  build_log=$(mktemp)
  "$@" 2>&1 | tee "$build_log"
  if grep -E "warning:" "$build_log" | grep -v "/\.build" | grep -E "$own_code"; then
    echo "error: $what has warnings in our own code (listed above)" >&2
    exit 1
  fi
}
build_without_warnings "/(Sources|Tests)/" "the build" swift build --build-tests
# Keeps the harness working; the numbers that matter come from release builds (BENCHMARKS.md).
"$(swift build --show-bin-path)/receipts-loadgen" bench --smoke
# The micro-benchmarks are a package of their own, over the service's modules: it must keep
# building, without warnings in its code, as the service's API moves.
build_without_warnings "/Benchmarks/Benchmarks/" "the benchmarks' build" \
  swift build --package-path Benchmarks --target ReceiptsBenchmarks
# Tests that load the whole machine (a gateway pipelining beside spinning threads, a package
# built from nothing) run on their own afterwards, so they cannot slow others' timed checks; so do
# the tests that need the machine's time on time: the coordinators' (against a real etcd, leases
# of 2 to 6 s need keepalives on time, which a machine as busy as the main run cannot promise)
# and the rebalance driver's (they must catch a move in its middle, between batches a few
# hundred milliseconds apart).
machine_loading='ReplyDeliveryTests/pipeliningAtTheLimitUnderContention|ReadmeQuickStartTests/gatewayPackageBuildsOutsideTheRepositoryAndRuns'
timing='ReceiptsCoordinationTests|RebalanceDriverTests'
# The cluster simulation keeps a core busy for a minute (1,000 seeds, or 60 s once 100 ran, then
# each planted bug): on its own too, so that it takes no time from timed checks.
simulation='ClusterSimulationTests'
swift test --skip-build --skip "$machine_loading|$timing|$simulation"
swift test --skip-build --filter "$machine_loading"
swift test --skip-build --filter "$timing"
swift test --skip-build --filter "$simulation"
# Every fuzz target for a few seconds from the committed corpus (deploy/fuzz.sh for longer runs).
deploy/fuzz.sh 3
# The deploy kit renders and validates offline; the seeds' screens are driven in a real browser.
deploy/check-deploy.sh
SKIP_BUILD=1 Tests/WebBrowserTests/run.sh
