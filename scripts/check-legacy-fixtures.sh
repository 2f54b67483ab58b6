#!/bin/sh
# Runs the legacy parsers over real files with known values and reports, per
# file, whether we read what the file's own platform reads.
#
#   scripts/check-legacy-fixtures.sh FOLDER
#
# FOLDER (or $LEGACY_FIXTURES_DIR) holds <format>/<name> files with
# <name minus extension>.expected.json beside them. A folder that is missing,
# or holds no fixture, fails the check; otherwise it exits with the test's
# status.
set -eu

folder=${1:-${LEGACY_FIXTURES_DIR:-}}
if [ -z "$folder" ]; then
    echo "usage: scripts/check-legacy-fixtures.sh FOLDER" >&2
    exit 2
fi
if [ ! -d "$folder" ]; then
    echo "check-legacy-fixtures: no fixtures folder at $folder" >&2
    exit 1
fi
folder=$(cd "$folder" && pwd)
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
LEGACY_FIXTURES_DIR=$folder swift test --filter LegacyFixtureCheck >"$log" 2>&1 || status=$?
if grep -q '^fixture: ' "$log"; then
    sed -n 's/^fixture: //p' "$log"
else
    cat "$log"
    echo "check-legacy-fixtures: the check did not run" >&2
    exit 1
fi
exit "$status"
