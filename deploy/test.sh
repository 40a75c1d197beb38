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
# Every Swift test in one run, as plain `swift test` runs them: the suites that start processes
# and block on them run on threads of their own, as many at once as cores, and the timed ones
# (leases, call timeouts) on threads of their own too (ReceiptsTestTraits), so none waits
# behind the others for the cooperative pool.
swift test --skip-build
# Every fuzz target for a few seconds from the committed corpus (deploy/fuzz.sh for longer runs).
deploy/fuzz.sh 3
# The deploy kit renders and validates offline; the seeds' screens are driven in a real browser.
deploy/check-deploy.sh
SKIP_BUILD=1 Tests/WebBrowserTests/run.sh
