#!/usr/bin/env bash
# Installs the Debian packages receiptd needs to build, test and run (as root).
# prometheus ships prometheus and promtool, which the tests run; etcd-server ships etcd (3.4), which
# the coordination tests start on loopback. Only what is missing is installed; safe to run again.
set -euo pipefail
packages=(libzmq3-dev libsodium-dev libprotobuf-c-dev protobuf-c-compiler pkg-config zlib1g-dev prometheus etcd-server)
if [ "${RECEIPTD_WITH_REDIS:-0}" = 1 ]; then packages+=(redis-server); fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update
  # No recommended packages: prometheus would bring prometheus-node-exporter, a network daemon.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  # The tests start their own Prometheus on loopback; on a host with systemd the package's own
  # service (listening on *:9090) must not stay running.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus || true
  fi
  # Likewise etcd-server's own service (on 127.0.0.1:2379): the tests start their own etcd.
  if [[ " ${missing[*]} " == *" etcd-server "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now etcd || true
  fi
fi
