#!/usr/bin/env bash
# Measures the cold release build a new user's first deploy/run.sh meets, per package: a fresh
# clone of this commit, an empty build directory and, with --fresh-cache, an empty SwiftPM cache
# (every dependency cloned from its origin, as on a fresh machine). Prints the time to resolve
# the dependencies, the build's wall time and steps, and per package the compiler time it took:
# every half second the running compilers are sampled (a Swift module's frontend by its module
# name, a C file's clang by its path), so a package's core-seconds are its samples times 0.5 s.
# One sample counts one process, whatever threads it runs: the shares are approximate, the wall
# time and the steps are exact.
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

# The running compilers, every half second while the builds run: a Swift frontend by its module
# name, a clang by the source file it compiles, a linker as such.
sample() {
  while true; do
    ps -eww -o args= | awk '
      $1 ~ /swift-frontend$/ { for (i = 1; i < NF; i++) if ($i == "-module-name") { print "module " $(i + 1); break } }
      $1 ~ /clang(\+\+)?(-[0-9]+)?$/ {
        for (i = 2; i <= NF; i++) if ($i ~ /\.(c|cc|cpp|S|s)$/) { print "file " $i; break }
      }
      $1 ~ /(^|\/)(ld|ld\.gold|ld\.lld|lld)$/ { print "link" }
    '
    sleep 0.5
  done
}
sample >"$work/samples" &
sampler=$!
trap 'kill "$sampler" 2>/dev/null; rm -rf "$work"' EXIT
for product in receiptd receiptctl; do
  if ! swift build "${cache[@]}" -c release --product "$product" >"$work/build-$product.log" 2>&1; then
    tail -40 "$work/build-$product.log" >&2
    exit 1
  fi
done
built=$EPOCHREALTIME
kill "$sampler"

# The package of a sample: ours, or the checkout that holds the module or file.
package_of() {
  local kind=$1 name=$2 directory
  case "$kind" in
    link) echo "(linking)" ;;
    file)
      case "$name" in
        */.build/checkouts/*) name=${name#*/.build/checkouts/} && echo "${name%%/*}" ;;
        *) echo "receiptd" ;;
      esac
      ;;
    module)
      if [[ -d "Sources/$name" ]]; then
        echo "receiptd"
        return
      fi
      for directory in .build/checkouts/*/Sources/"$name"; do
        if [[ -d "$directory" ]]; then
          basename "$(dirname "$(dirname "$directory")")"
          return
        fi
      done
      echo "(module:$name)"
      ;;
  esac
}

sort "$work/samples" | uniq -c | while read -r count kind name; do
  echo "$count $(package_of "$kind" "${name:-}")"
done >"$work/packages"

steps=$(grep -hcE '^\[[0-9]+/[0-9]+\]' "$work"/build-*.log | awk '{ total += $1 } END { print total }')
awk -v resolve="$(awk -v a="$started" -v b="$resolved" 'BEGIN { print b - a }')" \
  -v build="$(awk -v a="$resolved" -v b="$built" 'BEGIN { print b - a }')" -v steps="$steps" '
  { seconds[$2] += $1 * 0.5; total += $1 * 0.5 }
  END {
    printf "resolve: %.0f s; release build of receiptd and receiptctl: %.0f s wall, %d steps, %.0f compiler core-seconds\n", resolve, build, steps, total
    print "| package | compiler core-seconds | share |"
    print "|---|---:|---:|"
    for (p in seconds) printf "| %s | %.0f | %.0f%% |\n", p, seconds[p], 100 * seconds[p] / total | "sort -t\"|\" -k3 -n -r"
  }
' "$work/packages"
