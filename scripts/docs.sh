#!/usr/bin/env bash
# Builds the two DocC catalogs with the toolchain's docc, failing on any
# warning:
#   Sources/Preferences/Preferences.docc          -> OUTPUT_DIR/Preferences
#   Sources/PreferencesEtcd/PreferencesEtcd.docc  -> OUTPUT_DIR/PreferencesEtcd
#
#   scripts/docs.sh [OUTPUT_DIR]     (default: .build/docs)
set -euo pipefail
cd "$(dirname "$0")/.."
output="${1:-.build/docs}"
# A build of its own, so the symbol graphs are always emitted. Building the
# PreferencesEtcd target builds Preferences too; each module's graphs then
# go to the catalog of that module.
scratch=".build/docs-build"
graphs="$scratch/symbol-graphs"
rm -rf "$output" "$graphs"
mkdir -p "$output" "$graphs/Preferences" "$graphs/PreferencesEtcd"
touch Sources/Preferences/Values/PreferenceValue.swift Sources/PreferencesEtcd/EtcdConfiguration.swift
swift build --scratch-path "$scratch" --target PreferencesEtcd \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" \
    -Xswiftc -emit-extension-block-symbols >/dev/null
# Each module's graphs go to its own catalog: Preferences.symbols.json and
# Preferences@<extended module>.symbols.json to one, PreferencesEtcd's to the
# other.
shopt -s nullglob
for graph in "$graphs"/*.symbols.json; do
    module="$(basename "$graph" .symbols.json)"
    module="${module%%@*}"
    case $module in
    Preferences | PreferencesEtcd) mv "$graph" "$graphs/$module/" ;;
    esac
done

# Builds one catalog; $1 the module, $2 its catalog, $3 its bundle identifier.
convert() {
    docc convert "$2" \
        --additional-symbol-graph-dir "$graphs/$1" \
        --fallback-display-name "$1" --fallback-bundle-identifier "$3" \
        --output-path "$output/$1" --warnings-as-errors
    echo "documentation for $1 written to $output/$1"
}
convert Preferences Sources/Preferences/Preferences.docc org.preferences.Preferences
convert PreferencesEtcd Sources/PreferencesEtcd/PreferencesEtcd.docc org.preferences.PreferencesEtcd
