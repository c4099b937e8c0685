#!/usr/bin/env bash
# Runs the whole test suite: unit tests and interop tests against real
# XRootD 5.5 clients and servers, curl and uproot. Under CI=true a missing
# peer fails its test instead of skipping it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/bin:$PATH" SITEBOX_BIN="$PWD/bin/sitebox" SITEBOX_PYTHON="$PWD/.venv/bin/python"
go vet ./...
# The interop package alone takes 17-20 minutes on a 2-core machine;
# the timeout catches hangs, not slowness.
go test -count=1 -timeout 45m ./... 2>&1 | tee /tmp/sitebox-test.log
status=${PIPESTATUS[0]}
passed=$(grep -c '^ok ' /tmp/sitebox-test.log || true)
failed=$(grep -c '^FAIL\s' /tmp/sitebox-test.log || true)
echo "packages: $passed passed, $failed failed"
exit "$status"
