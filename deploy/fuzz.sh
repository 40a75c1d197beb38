#!/usr/bin/env bash
# Builds receipts-fuzz with libFuzzer and AddressSanitizer, then runs each fuzz target for
# SECONDS (default 60) from the committed corpus.
#
#   deploy/fuzz.sh [SECONDS] [TARGET...]     targets: event-batch query snapshot segment engine
#                                          replication-request replication-message
#
# Inputs that find new coverage go to .build-fuzz/corpus/TARGET (not committed). A crash or a
# broken invariant stops the run and leaves its input in .build-fuzz/crash-TARGET-*; once fixed,
# the input belongs in Tests/ReceiptsFuzzingTests/Corpus/TARGET/, where swift test replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if ! [[ $seconds =~ ^[0-9]+$ ]]; then
  echo "usage: deploy/fuzz.sh [SECONDS] [TARGET...]" >&2
  exit 2
fi
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(event-batch query snapshot segment engine replication-request replication-message); fi
build=(swift build -c release --scratch-path .build-fuzz)
"${build[@]}" --product receipts-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
fuzz="$("${build[@]}" --show-bin-path)/receipts-fuzz"
# A finding ends in fatalError; Swift's own crash handler would then read the stack under
# AddressSanitizer and add a misleading second report. libFuzzer's report is enough.
export SWIFT_BACKTRACE=enable=no
for target in "${targets[@]}"; do
  corpus=.build-fuzz/corpus/$target
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s"
  "$fuzz" --target="$target" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix=".build-fuzz/crash-$target-" "$corpus" "Tests/ReceiptsFuzzingTests/Corpus/$target"
done
