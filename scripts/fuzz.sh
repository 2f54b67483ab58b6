#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/*.swift compiled with the library
# sources as one module, -sanitize=fuzzer,address) and runs them.
#
#   scripts/fuzz.sh TARGET SECONDS     fuzz one target for SECONDS
#   scripts/fuzz.sh --all SECONDS      fuzz every target for SECONDS each, one per core at a time
#   scripts/fuzz.sh --list             print the target names
#
# Seeds come from Fuzz/corpus/TARGET (checked in, small); what a run adds is
# kept in .build/fuzz/corpus/TARGET so later runs start from it. A finding
# (crash, trap, undocumented error, leak, or an input slower than 10 s) stops
# the run; its input is saved as .build/fuzz/findings/TARGET/crash-… and the
# script exits non-zero. Each run prints one summary line:
#   fuzz TARGET: N executions in S s, K corpus inputs, result ok|FINDING
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v swiftc >/dev/null 2>&1; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

targets=(store-decoder json-text properties-utf8 properties-latin1 shared-prefs
    plist-xml plist-binary envdir json-values)

usage() {
    echo "usage: scripts/fuzz.sh TARGET SECONDS | --all SECONDS | --list" >&2
    echo "targets: ${targets[*]}" >&2
    exit 2
}

[[ $# -ge 1 ]] || usage
if [[ $1 == --list ]]; then
    printf '%s\n' "${targets[@]}"
    exit 0
fi
[[ $# -eq 2 && $2 =~ ^[0-9]+$ ]] || usage

if [[ $1 == --all ]]; then
    selected=("${targets[@]}")
else
    found=no
    for name in "${targets[@]}"; do [[ $name == "$1" ]] && found=yes; done
    [[ $found == yes ]] || usage
    selected=("$1")
fi
seconds=$2

# The fuzzer runtime ships with the Swift toolchain; libFuzzer's link step
# needs the C++ runtime (libstdc++), which minimal images may lack.
if ! ldconfig -p 2>/dev/null | grep 'libstdc++\.so\.6' >/dev/null; then
    echo "fuzz: installing libstdc++ (needed to link libFuzzer)" >&2
    if ! apt-get install -y libstdc++6 >/dev/null 2>&1; then
        apt-get update >/dev/null && apt-get install -y libstdc++6 >/dev/null
    fi
fi

build=.build/fuzz
binary=$build/prefs-fuzz
mkdir -p "$build"
mapfile -t sources < <(find Sources/Preferences Fuzz -name "*.swift" | sort)
stamp=$(cat "${sources[@]}" | sha256sum | cut -c1-16)
if [[ ! -x $binary || $(cat "$build/stamp" 2>/dev/null) != "$stamp" ]]; then
    echo "fuzz: building $binary" >&2
    start=$(date +%s)
    # The linker's notes about the sanitizer's local symbols are noise; show
    # the build's output only when it fails.
    if ! swiftc -O -sanitize=fuzzer,address -parse-as-library -swift-version 6 -package-name Preferences \
        -module-name PreferencesFuzz -g "${sources[@]}" -o "$binary" >"$build/build.log" 2>&1; then
        grep -v 'Cannot export local symbol' "$build/build.log" >&2
        exit 1
    fi
    echo "$stamp" >"$build/stamp"
    echo "fuzz: built in $(($(date +%s) - start)) s" >&2
fi

# One target's run: its summary line on standard output, what a finding
# left on standard error, and its result in $build/TARGET.result.
fuzz_target() {
    local target=$1 corpus=$build/corpus/$1 findings=$build/findings/$1 seeds=() code
    mkdir -p "$corpus" "$findings"
    [[ -d Fuzz/corpus/$target ]] && seeds=("Fuzz/corpus/$target")
    local log=$build/$target.log
    set +e
    PREFS_FUZZ_TARGET=$target "$binary" "$corpus" "${seeds[@]}" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
    code=$?
    set -e
    local executions inputs result
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    inputs=$(find "$corpus" -type f | wc -l)
    if [[ $code -eq 0 ]]; then
        result=ok
    else
        result=FINDING
        grep -E '^(==[0-9]+==|SUMMARY|Fatal error|.*fatalError)' "$log" | head -5 >&2 || true
        echo "fuzz: $target: see $log and $findings/" >&2
    fi
    echo "$result" >"$build/$target.result"
    echo "fuzz $target: ${executions:-?} executions in ${seconds} s, $inputs corpus inputs, result $result"
}

# The targets run side by side, one per core: each still gets its SECONDS,
# on a core of its own, and the whole run takes a fraction of the time.
cores=$(nproc 2>/dev/null || echo 1)
for target in "${selected[@]}"; do
    rm -f "$build/$target.result"
    while [[ $(jobs -rp | wc -l) -ge $cores ]]; do wait -n || true; done
    fuzz_target "$target" &
done
wait
status=0
for target in "${selected[@]}"; do
    [[ $(cat "$build/$target.result" 2>/dev/null) == ok ]] || status=1
done
exit $status
