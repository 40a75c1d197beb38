#!/usr/bin/env bash
# Measures the cold release build a new user's first deploy/run.sh meets, per package: a fresh
# clone of this commit, an empty build directory and, with --fresh-cache, an empty SwiftPM cache
# (every dependency cloned from its origin, as on a fresh machine). Prints the time to resolve
# the dependencies, the build's wall time, and per package the build steps and the wall time of
# the steps it started. SwiftPM runs one step per core at once, so a step's time here is until the
# next step starts: an approximation, whose column sums to the build's wall time.
#
# Usage: deploy/measure-build.sh [--fresh-cache]   (run it on an otherwise idle machine)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d /tmp/receiptd-build-XXXXXX)
trap 'rm -rf "$work"' EXIT
cache=()
if [[ "${1:-}" == "--fresh-cache" ]]; then
  cache=(--cache-path "$work/cache")
fi
git clone -q "$root" "$work/clone"
cd "$work/clone"

started=$EPOCHREALTIME
swift package "${cache[@]}" resolve >/dev/null
resolved=$EPOCHREALTIME

# Each line of the build's output with the time it was printed.
for product in receiptd receiptctl; do
  swift build "${cache[@]}" -c release --product "$product" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done
done >"$work/build.log"
built=$EPOCHREALTIME

# The package a module belongs to: ours, or the checkout whose Sources hold it.
package_of() {
  local module=$1 directory
  if [[ -d "Sources/$module" ]]; then
    echo "receiptd"
    return
  fi
  for directory in .build/checkouts/*/Sources/"$module"; do
    if [[ -d "$directory" ]]; then
      basename "$(dirname "$(dirname "$directory")")"
      return
    fi
  done
  echo "(other)"
}

# Each step's module, then its time until the next step starts.
awk '
  /\[[0-9]+\/[0-9]+\]/ {
    module = "(linking-and-other)"
    if ($3 == "Compiling" && $4 != "plugin") module = $4
    else if ($3 == "Emitting" && $4 == "module") module = $5
    else if ($3 == "Compiling" && $4 == "plugin") module = "(plugins)"
    if (previous != "") print previousModule, $1 - previous
    previous = $1; previousModule = module
  }
  END { if (previous != "") print previousModule, 0 }
' "$work/build.log" >"$work/steps"

# Module to package, once per module, then the sums per package.
cut -d' ' -f1 "$work/steps" | sort -u | while read -r module; do
  echo "$module $(package_of "$module")"
done >"$work/packages"

awk -v resolve="$(awk -v a="$started" -v b="$resolved" 'BEGIN { print b - a }')" \
  -v build="$(awk -v a="$resolved" -v b="$built" 'BEGIN { print b - a }')" '
  FNR == NR { package[$1] = $2; next }
  { steps[package[$1]] += 1; seconds[package[$1]] += $2; total += 1 }
  END {
    printf "resolve: %.0f s; release build of receiptd and receiptctl: %.0f s, %d steps\n", resolve, build, total
    print "| package | steps | wall time of its steps (s) |"
    print "|---|---:|---:|"
    for (p in steps) printf "| %s | %d | %.0f |\n", p, steps[p], seconds[p] | "sort -t\"|\" -k4 -n -r"
  }
' "$work/packages" "$work/steps"
