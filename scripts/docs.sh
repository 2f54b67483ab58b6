#!/usr/bin/env bash
# Builds the DocC catalog with the toolchain's docc, failing on any warning.
#   scripts/docs.sh [OUTPUT_DIR]     (default: .build/docs)
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/docs}"
# A build of its own, so the symbol graphs are always emitted.
scratch=".build/docs-build"
graphs="$scratch/symbol-graphs"
rm -rf "$output" "$graphs"
mkdir -p "$graphs"
touch Sources/Preferences/Values/PreferenceValue.swift
swift build --scratch-path "$scratch" --target Preferences \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" >/dev/null
log="$(mktemp)"
docc convert Sources/Preferences/Preferences.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name Preferences --fallback-bundle-identifier org.preferences.Preferences \
    --output-path "$output" --warnings-as-errors 2>&1 | tee "$log"
echo "documentation written to $output"
