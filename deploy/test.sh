#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, check that the committed
# protoc-c output is fresh, build (our own code must have no warnings), and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
proto/check-generated.sh
build_log=$(mktemp)
swift build --build-tests 2>&1 | tee "$build_log"
if grep -E "warning:" "$build_log" | grep -v "/\.build" | grep -E "/(Sources|Tests)/" ; then
  echo "error: the build has warnings in our own code (listed above)" >&2
  exit 1
fi
swift test --skip-build
# A seconds-long run of the benchmark harness, so it keeps working (numbers: BENCHMARKS.md).
.build/debug/receipts-loadgen bench --smoke
