#!/usr/bin/env bash
# Browser tests of receipts-web against a real receiptd, in a real headless Chromium.
#
# Installs what is missing (Debian's chromium and chromium-driver; selenium and pytest from
# PyPI), builds receiptd, receipts-web and receiptctl, starts the first two on loopback with a
# temporary data dir and a free port, runs the pytest files next to this script, and always
# stops them. Tests reach receiptd without the gateway (a device on another gateway) through
# receiptctl, with the gateway's namespace (RECEIPTS_WEB_NAMESPACE, RECEIPTD_DATA_DIR, RECEIPTCTL).
# Screenshots, logs and the read latency land in Tests/WebBrowserTests/artifacts/.
# SKIP_BUILD=1 uses the binaries already built; extra arguments go to pytest.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
artifacts="${RECEIPTS_WEB_ARTIFACTS:-$here/artifacts}"
mkdir -p "$artifacts"

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    echo "run.sh: installing chromium and chromium-driver" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi
# selenium and pytest in a virtual environment of their own (see deploy/python-tools.sh).
# shellcheck source=../../deploy/python-tools.sh
source "$root/deploy/python-tools.sh"
python_tools_venv "${RECEIPTD_BROWSER_TOOLS:-/opt/receiptd-browser-tools}" "selenium==4.51.0
pytest==9.0.3"
export PATH="$venv/bin:$PATH"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    (cd "$root" && swift build --product receiptd && swift build --product receipts-web &&
        swift build --product receiptctl)
fi
bin="$(cd "$root" && swift build --show-bin-path)"

work="$(mktemp -d /tmp/receipts-web-tests.XXXXXX)"
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in $(seq 50); do
        local alive=0
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    cp "$work"/*.log "$artifacts"/ 2>/dev/null || true
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to $2 seconds for the command $1 to succeed.
wait_for() {
    local deadline=$((SECONDS + $2))
    until eval "$1" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then echo "run.sh: timed out waiting for: $1" >&2; return 1; fi
        sleep 0.1
    done
}

data="$work/receiptd"
mkdir -p "$data"
receiptd_flags=(--data-dir "$data")
# receiptd's HTTP endpoint (when this build has one) is not needed here: keep its port free.
if "$bin/receiptd" --help 2>&1 | grep -q -- '--http'; then receiptd_flags+=(--http off); fi
"$bin/receiptd" "${receiptd_flags[@]}" >"$work/receiptd.log" 2>&1 &
pids+=($!)
wait_for "test -S '$data/ingest.sock' && test -S '$data/query.sock' && test -S '$data/updates.sock'" 30

port="$(free_port)"
namespace="web$(date +%s)"
"$bin/receipts-web" --http "127.0.0.1:$port" --receiptd-data-dir "$data" --namespace "$namespace" \
    >"$work/receipts-web.log" 2>&1 &
pids+=($!)
wait_for "python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:$port/\", timeout=1)'" 60

set +e
RECEIPTS_WEB_URL="http://127.0.0.1:$port" RECEIPTS_WEB_ARTIFACTS="$artifacts" \
    RECEIPTS_WEB_NAMESPACE="$namespace" RECEIPTD_DATA_DIR="$data" RECEIPTCTL="$bin/receiptctl" \
    timeout 1200 python3 -m pytest -p no:cacheprovider -v "$here" "$@"
rc=$?
set -e
exit "$rc"
