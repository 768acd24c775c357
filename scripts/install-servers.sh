#!/usr/bin/env bash
# Installs the servers the test suite starts itself (Redis, ZooKeeper, etcd, MariaDB,
# PostgreSQL), Chromium for the admin page's browser test, libfaketime and iptables for the nemesis
# suite, from Debian packages. Idempotent and quiet when everything is present.
# It never starts, stops or disables a system service: the tests run their own server
# processes on their own ports.
set -euo pipefail

PACKAGES=(redis-server zookeeper netcat-openbsd etcd-server etcd-client mariadb-server postgresql openssl chromium faketime iptables)

have() { command -v "$1" >/dev/null 2>&1; }
find_missing() {
  missing=()
  have redis-server || missing+=(redis-server)
  have redis-cli || missing+=(redis-cli)
  [ -f /usr/share/java/zookeeper.jar ] || missing+=(zookeeper)
  have java || missing+=(java)
  have etcd || missing+=(etcd)
  { have mariadbd || have mysqld || [ -x /usr/sbin/mariadbd ] || [ -x /usr/sbin/mysqld ]; } || missing+=(mariadbd)
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
  have nc || missing+=(nc)
  have openssl || missing+=(openssl) # test certificates for the TLS tests
  have chromium || missing+=(chromium) # the admin page's browser test (driven by playwright-core)
  [ -f /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1 ] || compgen -G '/usr/lib/*/faketime/libfaketimeMT.so.1' >/dev/null || missing+=(faketime) # the nemesis suite's slow client clock
  have iptables || [ -x /usr/sbin/iptables ] || missing+=(iptables) # the nemesis suite's "partition tcp" (as root)
}

find_missing

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-servers: missing ${missing[*]}; installing: ${PACKAGES[*]}" >&2

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if have sudo; then
    SUDO=(sudo)
  else
    echo "install-servers: not root and no sudo. Please install these Debian packages:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${PACKAGES[*]}" >&2
    exit 1
  fi
fi
if ! have apt-get; then
  echo "install-servers: apt-get not found. Please install: ${PACKAGES[*]}" >&2
  exit 1
fi

# Keep package scripts from starting system services on their default ports: a temporary
# policy-rc.d denies it (invoke-rc.d and deb-systemd-invoke both honour it). An existing
# policy-rc.d is left exactly as it is.
POLICY=/usr/sbin/policy-rc.d
added_policy=0
cleanup() {
  if [ "$added_policy" -eq 1 ]; then "${SUDO[@]}" rm -f "$POLICY"; fi
}
trap cleanup EXIT
if [ ! -e "$POLICY" ]; then
  printf '#!/bin/sh\n# temporary, written by nestjs-distributed-lock scripts/install-servers.sh\nexit 101\n' \
    | "${SUDO[@]}" tee "$POLICY" >/dev/null
  "${SUDO[@]}" chmod 755 "$POLICY"
  added_policy=1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${PACKAGES[@]}" >/dev/null

find_missing
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-servers: still missing after install: ${missing[*]}" >&2
  exit 1
fi
echo "install-servers: done" >&2
