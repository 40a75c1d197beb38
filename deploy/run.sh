#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build, and run receiptd
# on its embedded default configuration (data in ./receiptd-data, ipc:// endpoints there).
# Extra arguments go to receiptd, e.g. deploy/run.sh --fsync interval:5
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
swift build -c release --product receiptd
swift build -c release --product receiptctl
exec .build/release/receiptd "$@"
