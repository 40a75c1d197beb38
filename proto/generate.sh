#!/bin/bash
# Regenerates the protobuf-c code of the CReceiptsProto target from proto/receipts.proto.
#
# Usage: proto/generate.sh [output-dir]
#   output-dir defaults to Sources/CReceiptsProto; the .c file goes there and the
#   header into its include/ subdirectory (the target's public headers).
#
# The output is checked in; proto/check-generated.sh verifies it is up to date.
# Needs protoc-c from Debian's protobuf-c-compiler (protobuf-c 1.4.1): another
# version writes a different version guard into the header.

set -euo pipefail

log() { printf -- "** %s\n" "$*" >&2; }
fatal() { printf -- "** ERROR: %s\n" "$*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
output="${1:-$root/Sources/CReceiptsProto}"

command -v protoc-c >/dev/null || fatal "protoc-c not found (apt-get install protobuf-c-compiler)"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

log "$(protoc-c --version | head -n 1): receipts.proto -> $output"
# Run from proto/ with a relative file name so that the "Generated from" line is stable.
(cd "$here" && protoc-c --proto_path=. --c_out="$scratch" receipts.proto)

mkdir -p "$output/include"
# The .c file includes "receipts.pb-c.h"; SwiftPM puts the target's include/ directory
# on the header search path, so the quoted include resolves there without rewriting.
grep -qx '#include "receipts.pb-c.h"' "$scratch/receipts.pb-c.c" \
  || fatal "unexpected include line in receipts.pb-c.c"
cp "$scratch/receipts.pb-c.c" "$output/receipts.pb-c.c"
cp "$scratch/receipts.pb-c.h" "$output/include/receipts.pb-c.h"
