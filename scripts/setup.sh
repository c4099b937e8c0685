#!/usr/bin/env bash
# Installs what sitebox's demo and tests need on Debian 12, idempotently:
# XRootD 5.5 (server, client, Python bindings, and the client headers with
# g++ for a test client of XrdCl calls no tool exposes), curl, openssl, Slurm and
# munge (the job router's site domain), an MIT Kerberos KDC and client tools
# (the Kerberos tests run a throwaway realm), gfal2 + davix + litmus (the
# third-party-copy and WebDAV peers), FUSE 3 with xrootdfs, rclone and fio
# (the peers of `sitebox mount` and its benchmark), slot users for test jobs,
# Chromium (the dashboard test), a Python venv with uproot, Go modules,
# Toxiproxy, and builds bin/sitebox.
# Fast when all is present. With --demo, only what scripts/demo.sh uses:
# no Python venv, benchmark tool or Toxiproxy.
set -euo pipefail
cd "$(dirname "$0")/.."
demo=no
[ "${1:-}" = --demo ] && demo=yes

need_apt=()
for pkg in xrootd-server xrootd-server-plugins xrootd-client python3-xrootd python3-venv curl openssl slurm-wlm munge chromium krb5-kdc krb5-admin-server krb5-user \
  gfal2-util-scripts python3-gfal2-util python3-gfal2 gfal2-plugin-http gfal2-plugin-xrootd davix litmus iproute2 util-linux \
  g++ libxrootd-client-dev voms-clients globus-proxy-utils xrootd-voms-plugins \
  fuse3 xrootd-fuse rclone fio; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
if ((${#need_apt[@]})); then
  echo "setup: installing ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_apt[@]}"
fi

# Jobs never run as the box's user: the tests run them as these slot users
# (sbxslot1-3, 13-16 and 21 the job packages' tests, 4-9, 17-20 and 22 the
# interop tests, 10-12 the benchmarks), unprivileged system accounts with no home and no login.
for i in $(seq 1 22); do
  id -u "sbxslot$i" >/dev/null 2>&1 && continue
  echo "setup: creating slot user sbxslot$i"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO useradd --system --no-create-home --user-group --home-dir /nonexistent --shell /usr/sbin/nologin "sbxslot$i"
done

go mod download
go build -o bin/sitebox ./cmd/sitebox
[ "$demo" = yes ] && exit 0

# Debian's XRootD 5.5 bindings live in the system Python; the venv sees them.
# htcondor: HTCondor's own submit-file parser (htcondor2.Submit), which the
# job tests compare the box's reading with. pytest runs the upstream suites
# (XRootD's bindings tests, fsspec-xrootd's) of test/interop/suites_test.go.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import uproot, awkward, aiohttp, requests, XRootD.client, htcondor2, fsspec_xrootd, pytest" 2>/dev/null; then
  echo "setup: preparing .venv (uproot, awkward, numpy, htcondor)"
  /usr/bin/python3 -m venv --system-site-packages .venv
  .venv/bin/pip install -q uproot awkward numpy fsspec-xrootd aiohttp requests htcondor pytest
fi

# The comparison benchmarks (against xrootd, XCache, cmsd, Slurm) are a
# separate tool that serves with the sitebox next to it.
go build -o bin/sitebox-bench ./cmd/sitebox-bench

# Toxiproxy shapes the upstream link in `sitebox-bench cache` and its tests
# (latency, per-connection bandwidth, cuts). Its binary is named "server",
# so give it a stable name in bin/ where test/peers looks first.
if [ ! -x bin/toxiproxy-server ]; then
  gobin="$(go env GOPATH)/bin"
  if [ ! -x "$gobin/server" ] || ! "$gobin/server" -version 2>&1 | grep -qi toxiproxy; then
    echo "setup: installing toxiproxy"
    go install github.com/Shopify/toxiproxy/v2/cmd/server@latest
  fi
  ln -sf "$gobin/server" bin/toxiproxy-server
fi
