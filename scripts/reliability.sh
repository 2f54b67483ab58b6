#!/usr/bin/env bash
# The reliability harnesses in one command, printing their figures (what they
# try: Sources/Preferences/Preferences.docc/Reliability.md; their latest
# figures: docs/reliability.md).
#
#   scripts/reliability.sh            full: 1,000 kills, multi-process, faults,
#                                     120 s of fuzzing per target, the test
#                                     suite under ThreadSanitizer, and every
#                                     deliberate bug in scripts/mutants/
#                                     (scripts/mutants.sh) and in
#                                     scripts/mutants/integration/, the
#                                     swift-configuration integration's
#                                     (scripts/integration-mutants.sh)
#   scripts/reliability.sh --quick    CI: 100 kills, multi-process, faults,
#                                     30 s of fuzzing per target
#   scripts/reliability.sh --under-load
#                                     the whole suite (`swift test`) once on
#                                     a quiet machine, then three times beside
#                                     one CPU-bound process per core and a
#                                     disk writer, with every deadline scaled
#                                     by PREFS_TEST_TIME_SCALE (3 unless set);
#                                     every run must pass
#
# Options: --fuzz-seconds N (per target), --no-fuzz, --no-tsan, --no-mutants,
# --seed N (repeat the crash harness's random kill moments).
# Exits non-zero if any harness fails.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v swift >/dev/null 2>&1; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

mode=full
fuzz_seconds=120
fuzz=yes
tsan=yes
mutants=yes
while [[ $# -gt 0 ]]; do
    case $1 in
    --quick) mode=quick; fuzz_seconds=30; tsan=no; mutants=no ;;
    --under-load) mode=under-load ;;
    --fuzz-seconds) fuzz_seconds=$2; shift ;;
    --no-fuzz) fuzz=no ;;
    --no-tsan) tsan=no ;;
    --no-mutants) mutants=no ;;
    --seed) export PREFS_RELIABILITY_SEED=$2; shift ;;
    *) echo "usage: scripts/reliability.sh [--quick | --under-load] [--fuzz-seconds N] [--no-fuzz] [--no-tsan] [--no-mutants] [--seed N]" >&2; exit 2 ;;
    esac
    shift
done

status=0
log=.build/reliability
mkdir -p "$log"
summary=()

elapsed() { echo "$(($(date +%s) - $1)) s"; }

# The whole suite beside load: one busy loop per core and a writer that
# fsyncs 64 MiB at a time, for as long as a run lasts. The first run is
# quiet, the yardstick the loaded runs are compared with.
if [[ $mode == under-load ]]; then
    swift build --build-tests >"$log/build.log" 2>&1 || { cat "$log/build.log"; exit 1; }
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    scale=${PREFS_TEST_TIME_SCALE:-3}
    unset PREFS_TEST_TIME_SCALE
    for run in quiet 1 2 3; do
        load=()
        if [[ $run != quiet ]]; then
            for _ in $(seq "$(nproc)"); do
                bash -c 'while :; do :; done' &
                load+=($!)
            done
            bash -c 'while :; do dd if=/dev/zero of="$1/disk" bs=1M count=64 conv=fsync status=none; done' _ "$scratch" &
            load+=($!)
        fi
        start=$(date +%s)
        if [[ $run == quiet ]]; then
            factor=1
        else
            factor=$scale
        fi
        if PREFS_TEST_TIME_SCALE=$factor swift test --skip-build >"$log/under-load-$run.log" 2>&1; then
            result=passed
        else
            result=FAILED
            status=1
            grep -E '^✘' "$log/under-load-$run.log" | head -20 >&2
        fi
        took=$(elapsed "$start")
        if [[ ${#load[@]} -gt 0 ]]; then kill "${load[@]}" 2>/dev/null; wait "${load[@]}" 2>/dev/null; fi
        tests=$(grep -Eo 'Test run with [0-9]+ tests?' "$log/under-load-$run.log" | tail -1)
        what=$([[ $run == quiet ]] && echo "quiet run" || echo "run $run under load")
        summary+=("$what: ${tests#Test run with } $result in $took (log: $log/under-load-$run.log)")
        echo "${summary[-1]}"
    done
    echo
    echo "== reliability (under load: PREFS_TEST_TIME_SCALE=$scale, $(nproc) cores) =="
    printf '%s\n' "${summary[@]}"
    exit $status
fi

# Crash, multi-process and fault harnesses: the Reliability* test suites,
# the migration crash suites, the store's own fault suites and the watch's
# cancellation. A harness that was skipped (its capability missing here)
# fails the run: its figures would be missing.
start=$(date +%s)
if [[ $mode == full ]]; then export PREFS_RELIABILITY=full PREFS_MIGRATION_KILLS=100; fi
swift build --build-tests >"$log/build.log" 2>&1 || { cat "$log/build.log"; exit 1; }
harnesses='Reliability(Crash|MultiProcess|Fault|Swap|Fuzz)|MigrationCrash|StoreFault|StorePermissionFault|FileWatchCancel'
if swift test --skip-build --filter "$harnesses" >"$log/tests.log" 2>&1; then
    result=passed
else
    result=FAILED
    status=1
    grep -E '✘' "$log/tests.log" | head -20 >&2
fi
mapfile -t skipped < <(grep -E '^➜ (Test|Suite) .* skipped' "$log/tests.log")
if [[ ${#skipped[@]} -gt 0 ]]; then
    result="$result, ${#skipped[@]} SKIPPED"
    status=1
    printf '%s\n' "${skipped[@]}" >&2
fi
tests=$(grep -Eo 'Test run with [0-9]+ tests?' "$log/tests.log" | tail -1)
summary+=("harness tests: ${tests#Test run with }, ${#skipped[@]} skipped")
unset PREFS_RELIABILITY PREFS_MIGRATION_KILLS
mapfile -t figures < <(sed -n 's/^reliability: //p; s/^\(migration kills: .*\)/\1/p' "$log/tests.log")
summary+=("${figures[@]}")
summary+=("harness suites $result in $(elapsed "$start") (log: $log/tests.log)")

# Crash states: every workload under both persistence models.
swift run -c release prefs-crash-explorer >"$log/crash-states.log" 2>&1 || status=1
summary+=("crash states: $(sed -n 's/^total *//p' "$log/crash-states.log") (log: $log/crash-states.log)")

if [[ $fuzz == yes ]]; then
    start=$(date +%s)
    if ! scripts/fuzz.sh --all "$fuzz_seconds" >"$log/fuzz.log" 2>"$log/fuzz.err"; then
        status=1
        cat "$log/fuzz.err" >&2
    fi
    mapfile -t figures < "$log/fuzz.log"
    summary+=("${figures[@]}")
    summary+=("fuzzing took $(elapsed "$start") including the build")
fi

if [[ $tsan == yes ]]; then
    start=$(date +%s)
    # A separate build directory, so the normal build is not thrown away.
    # Three runs, as in .ci/run: the computation-only suites go second and
    # the suites that kill child processes and the etcd cluster runs last,
    # each on their own.
    process_suites='MigrationCrashTests|ReliabilityCrashTests|EtcdClusterTests'
    compute_suites='ChangeLogEditingTests|LegacyPropertiesDifferentialTests|DeferredMemberParsingTests|StoreDocumentDecodingTests|JSONStringScanningTests|ByteKeySortTests|KeyCheckTests|ContentHashTests|StoreDocumentEncodingTests|LegacyRobustnessTests'
    result="passed"
    : >"$log/tsan.log"
    # The one false report .ci/run suppresses too (see the file).
    export TSAN_OPTIONS="suppressions=$PWD/.ci/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
    for selection in "--skip $process_suites|$compute_suites" "--filter $compute_suites" \
        "--filter $process_suites"; do
        # shellcheck disable=SC2086 # the option and its pattern, split on purpose
        if ! swift test --sanitize=thread --scratch-path .build/tsan \
            $selection >>"$log/tsan.log" 2>&1; then
            result="FAILED"
            status=1
        fi
    done
    races=$(grep -c 'WARNING: ThreadSanitizer' "$log/tsan.log" || true)
    tests=$(grep -Eo 'Test run with [0-9]+ tests?' "$log/tsan.log" | awk '{ n += $4 } END { print n " tests" }')
    summary+=("tsan: swift test --sanitize=thread $result, $races ThreadSanitizer reports, ${tests#Test run with } in $(elapsed "$start") (log: $log/tsan.log)")
fi

if [[ $mutants == yes ]]; then
    start=$(date +%s)
    # Every mutant must be killed: a survivor is a missing test.
    if scripts/mutants.sh >"$log/mutants.log" 2>&1; then
        result=passed
    else
        result=FAILED
        status=1
    fi
    killed=$(grep -c '^mutants: .*: killed by' "$log/mutants.log" || true)
    total=$(find scripts/mutants -maxdepth 1 -name '*.patch' | wc -l)
    summary+=("mutants: $killed of $total killed, $result in $(elapsed "$start") (table: $log/mutants.log)")

    # The swift-configuration integration's mutants: a package of its own,
    # built in a work tree of its own (a kill is an assertion of a named
    # test; a timeout or a crash is not).
    start=$(date +%s)
    if scripts/integration-mutants.sh >"$log/integration-mutants.log" 2>&1; then
        result=passed
    else
        result=FAILED
        status=1
    fi
    killed=$(grep -c '^integration-mutants: .*: killed' "$log/integration-mutants.log" || true)
    total=$(find scripts/mutants/integration -name '*.patch' | wc -l)
    summary+=("integration mutants: $killed of $total killed, $result in $(elapsed "$start") (table: $log/integration-mutants.log)")
fi

echo
echo "== reliability ($mode) =="
printf '%s\n' "${summary[@]}"
exit $status
