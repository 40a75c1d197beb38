#!/bin/bash
# Fails when the checked-in protobuf-c code is stale: regenerates it from
# proto/receipts.proto into a temporary directory and compares. CI runs this.

set -euo pipefail

log() { printf -- "** %s\n" "$*" >&2; }
error() { printf -- "** ERROR: %s\n" "$*" >&2; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
committed="$root/Sources/CReceiptsProto"

fresh="$(mktemp -d)"
trap 'rm -rf "$fresh"' EXIT

log "Regenerating protos..."
"$here/generate.sh" "$fresh"

stale=0
for file in receipts.pb-c.c include/receipts.pb-c.h; do
  if ! diff -u "$committed/$file" "$fresh/$file"; then
    error "Sources/CReceiptsProto/$file is stale or edited by hand"
    stale=1
  fi
done

if [ "$stale" -ne 0 ]; then
  error "Generated code is out of date: run proto/generate.sh and commit the result."
  exit 1
fi
log "Generated code is up-to-date"
