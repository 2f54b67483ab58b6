#!/bin/sh
# Runs the legacy parsers over real files with known values and reports, per
# file, whether we read what the file's own platform reads.
#
#   scripts/check-legacy-fixtures.sh [FOLDER]
#
# FOLDER (default /work/shared/fixtures/legacy) holds <format>/<name> files
# with <name minus extension>.expected.json beside them. Exits 0 with a skip
# message when the folder is absent; otherwise with the test's status.
set -eu

folder=${1:-/work/shared/fixtures/legacy}
if [ ! -d "$folder" ]; then
    echo "check-legacy-fixtures: skipped: no fixtures folder at $folder"
    exit 0
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
