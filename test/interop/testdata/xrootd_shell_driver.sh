#!/usr/bin/env bash
# Runs one of XRootD's tests/XRootD scripts (vendored unchanged in
# xrootd-shell/) against a server that is already running, and prints one
# line per checked command, "PASS <cmd>" or "FAIL <cmd>", instead of
# stopping at the first failure as XRootD's own test.sh does: the Go test
# compares the lines of two servers. The helpers below have the names and
# meaning of test.sh's; only "fail" does not exit.
#
# usage: xrootd_shell_driver.sh NAME HOST   (run in an empty directory)

NAME=$1
HOST=$2
export NAME HOST
SOURCE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/xrootd-shell" && pwd)"
export SOURCE_DIR
: "${XRD_REQUESTTIMEOUT:=15}" "${XRD_STREAMTIMEOUT:=10}" "${XRD_TIMEOUTRESOLUTION:=1}"
export XRD_REQUESTTIMEOUT XRD_STREAMTIMEOUT XRD_TIMEOUTRESOLUTION
LOCAL_DIR="${PWD}/${NAME}/data"
REMOTE_DIR="${PWD}/${NAME}/xrootd"
mkdir -p "$LOCAL_DIR" "$REMOTE_DIR"
export LOCAL_DIR REMOTE_DIR

function report() { printf '%s %s\n' "$1" "$2"; }
function error() { echo "error: $*" >&2; return 1; }
function assert() {
	if "$@" >/dev/null 2>"${PWD}/${NAME}/last.err"; then report PASS "$*"; else report FAIL "$*"; sed 's/^/    /' "${PWD}/${NAME}/last.err"; return 1; fi
}
function assert_failure() {
	if "$@" >/dev/null 2>&1; then report FAIL "(should fail) $*"; return 1; else report PASS "(should fail) $*"; fi
}
function assert_eq() { if [[ "$1" == "$2" ]]; then report PASS "eq $3"; else report FAIL "eq $3: expected $1 but received $2"; fi; }
function assert_ne() { if [[ "$1" != "$2" ]]; then report PASS "ne $3"; else report FAIL "ne $3: $1"; fi; }
function require_commands() { for p in "$@"; do command -v "$p" >/dev/null || report FAIL "require $p"; done; }

# shellcheck source=/dev/null
source "${SOURCE_DIR}/${NAME}.sh"
if [[ $(type -t "setup_${NAME}") == "function" ]]; then "setup_${NAME}"; fi
# The script's own "error" calls (checksum mismatches) end up here too.
function error() { report FAIL "error: $*"; }
"test_${NAME}"
echo "END ${NAME}"
