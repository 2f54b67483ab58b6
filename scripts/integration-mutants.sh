#!/usr/bin/env bash
# Applies deliberate bugs (mutants) to the swift-configuration integration,
# Integrations/PreferencesConfiguration, one at a time, and shows which test
# catches each: the proof that its tests fail when its code is wrong.
#
#   scripts/integration-mutants.sh            every mutant in scripts/mutants/integration/
#   scripts/integration-mutants.sh NAME ...   the mutants whose file names contain NAME
#
# Each mutant is a patch in scripts/mutants/integration/ with two header
# lines, as in scripts/mutants/: what it breaks ("Mutant: …") and the tests
# that must catch it ("Tests: A|B/testName": exact suite names, or
# Suite/test, `|`-separated; the run is
# `swift test --filter '\.(A)/|\.B/testName\('`).
#
# The script checks out the current commit in a work tree of its own
# (.build/integration-mutants/work; your files are never touched), builds the
# integration there (offline through mirrors of ../shared/vendor's bundles
# when that folder exists, as .ci/run does), runs every mutant's tests on the
# unmutated code first (they must pass there, with none skipped, or a kill
# would mean nothing), then applies one patch, builds, runs its tests, and
# reverts. A mutant counts as killed only when the build succeeded and a
# named test failed on an assertion (`#expect` or `#require`); the table
# gives that test and its first failing line. Anything else is reported as
# what it is, and fails the run: SURVIVED (every test passed: a test is
# missing), SKIPPED, TIMED OUT (a test failed only on a deadline it waited
# out), CRASHED (the test run ended without its summary), FAILED OTHERWISE
# (a test failed only on an error it threw), does not build, does not apply.
# Logs go to .build/integration-mutants/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

root=$PWD
base=$root/.build/integration-mutants
work=$base/work
logs=$base/logs
integration=Integrations/PreferencesConfiguration
mkdir -p "$logs"
git worktree remove --force "$work" >/dev/null 2>&1 || rm -rf "$work"
git worktree prune
git worktree add --detach --force "$work" HEAD >/dev/null
trap 'git -C "$root" worktree remove --force "$work" >/dev/null 2>&1 || true' EXIT
commit=$(git -C "$work" rev-parse --short HEAD)
# One build directory across runs: each mutant rebuilds only what it touches.
scratch=$base/build

patches=()
for patch in scripts/mutants/integration/*.patch; do
    if [[ $# -eq 0 ]]; then
        patches+=("$patch")
    else
        for name in "$@"; do
            [[ $patch == *"$name"* ]] && patches+=("$patch") && break
        done
    fi
done
[[ ${#patches[@]} -gt 0 ]] || {
    echo "integration-mutants: no mutant matches $*" >&2
    exit 2
}

# The vendored packages, as .ci/run takes them (without ../shared/vendor,
# SwiftPM resolves from the network, as for users).
vendor=$root/../shared/vendor
if [[ -d $vendor ]]; then
    mirrors=$base/vendor-mirrors
    rm -rf "$mirrors"
    mkdir -p "$mirrors"
    for bundle in "$vendor"/*.bundle; do
        name=$(basename "$bundle" .bundle)
        git clone -q --bare "$bundle" "$mirrors/${name%-*}.git"
    done
    for pair in apple/swift-configuration apple/swift-system apple/swift-collections \
        swift-server/swift-service-lifecycle apple/swift-log apple/swift-async-algorithms \
        apple/swift-metrics; do
        name=${pair#*/}
        for url in "https://github.com/$pair" "https://github.com/$pair.git"; do
            (cd "$work/$integration" &&
                swift package config set-mirror --original "$url" --mirror "$mirrors/$name.git")
        done
    done
fi

build() {
    (cd "$work/$integration" && swift build --build-tests --scratch-path "$scratch")
}
run_tests() {
    (cd "$work/$integration" && swift test --skip-build --scratch-path "$scratch" --filter "$1")
}

echo "integration-mutants: building the unmutated code at $commit"
if ! build >"$logs/build.log" 2>&1; then
    echo "integration-mutants: the unmutated code does not build; see $logs/build.log" >&2
    exit 1
fi

# The `swift test --filter` pattern of a "Tests:" line: each exact suite
# name, or Suite/test, between the module's "." and the "/" or "(" after it.
filter_of() {
    local entry pattern=()
    IFS='|' read -ra entries <<<"$1"
    for entry in "${entries[@]}"; do
        if [[ $entry == */* ]]; then
            pattern+=("\\.${entry}\\(")
        else
            pattern+=("\\.${entry}/")
        fi
    done
    (IFS='|'; echo "${pattern[*]}")
}

# Tests that a log reports as skipped (a test's or a suite's own line).
skipped_in() {
    grep -E '^[^ ]+ (Test|Suite) ' "$1" | grep -E ' skipped(: |$)' || true
}

# The issues a log records: "TEST() recorded an issue at FILE:LINE:COLUMN: WHAT"
# (a parameterized test's: "… recorded an issue with 1 argument NAME → VALUE at …").
issues_in() {
    grep -E '^[^ ]+ Test [^ ]+\) recorded an issue (with [0-9]+ arguments? .* )?at ' "$1" |
        sed -E 's/^[^ ]+ Test //' || true
}

filters=()
for patch in "${patches[@]}"; do
    tests=$(sed -n 's/^Tests: //p' "$patch" | head -n 1)
    if [[ -z $tests ]]; then
        echo "integration-mutants: $patch has no Tests: line" >&2
        exit 2
    fi
    filters+=("$(filter_of "$tests")")
done
all_tests=$(IFS='|'; echo "${filters[*]}")
echo "integration-mutants: running every mutant's tests on the unmutated code"
if ! run_tests "$all_tests" >"$logs/unmutated.log" 2>&1; then
    echo "integration-mutants: the tests fail on the unmutated code; see $logs/unmutated.log" >&2
    exit 1
fi
skipped=$(skipped_in "$logs/unmutated.log")
if [[ -n $skipped ]]; then
    echo "integration-mutants: tests were skipped on the unmutated code, so they could kill nothing:" >&2
    echo "$skipped" >&2
    exit 1
fi
passed=$(grep -cE '^[^ ]+ Test .*\) passed after' "$logs/unmutated.log" || true)
echo "integration-mutants: $passed tests pass unmutated"

# Rows of the table, their cells split by the unit separator (a failure
# line may hold any other character).
sep=$'\x1f'
rows=()
failed=0
killed=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .patch)
    what=$(sed -n 's/^Mutant: //p' "$patch" | head -n 1)
    tests=$(sed -n 's/^Tests: //p' "$patch" | head -n 1)
    log=$logs/$name.log
    if ! git -C "$work" apply "$root/$patch" 2>"$log"; then
        rows+=("$name${sep}does not apply (refresh the patch)${sep}${sep}${sep}$what")
        failed=1
        continue
    fi
    started=$SECONDS
    killers=""
    line=""
    if ! build >>"$log" 2>&1; then
        outcome="does not build"
    elif run_tests "$(filter_of "$tests")" >>"$log" 2>&1; then
        outcome="SURVIVED"
        [[ -n $(skipped_in "$log") ]] && outcome="SKIPPED: not checked"
    else
        issues=$(issues_in "$log")
        assertions=$(grep -E ': (Expectation|Requirement) failed' <<<"$issues" || true)
        if [[ -n $assertions ]]; then
            outcome="killed"
            killers=$(sed -E 's/\([^)]*\) recorded an issue .*$//' <<<"$assertions" | sort -u |
                paste -sd, - | sed 's/,/, /g')
            line=$(head -n 1 <<<"$assertions" | grep -oE '[A-Za-z0-9_+]+\.swift:[0-9]+:[0-9]+: .*' || true)
            killed=$((killed + 1))
            if [[ -n $(skipped_in "$log") ]]; then
                outcome="killed; SKIPPED some of its tests"
                failed=1
            fi
        elif grep -qE ': Caught error: waited ' <<<"$issues"; then
            outcome="TIMED OUT (not a kill)"
        elif ! grep -qE 'Test run with [0-9]+ tests?' "$log"; then
            outcome="CRASHED (not a kill)"
        else
            outcome="FAILED OTHERWISE (not a kill)"
        fi
    fi
    [[ $outcome == killed* ]] || failed=1
    git -C "$work" apply -R "$root/$patch"
    took=$((SECONDS - started))
    rows+=("$name${sep}$outcome ($took s)${sep}$killers${sep}$line${sep}$what")
    echo "integration-mutants: $name: $outcome${killers:+ by $killers} ($took s)"
done

echo
echo "integration-mutants: $killed of ${#patches[@]} killed at commit $commit"
echo
echo "| mutant | outcome | killing test | failure line | what it breaks |"
echo "|---|---|---|---|---|"
for row in "${rows[@]}"; do
    IFS=$sep read -r name outcome killers line what <<<"$row"
    echo "| $name | $outcome | $killers | ${line//|/\\|} | $what |"
done
exit "$failed"
