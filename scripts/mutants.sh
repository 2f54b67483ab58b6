#!/usr/bin/env bash
# Applies deliberate bugs (mutants) to the code one at a time and shows which
# test catches each: the proof that the tests fail when the code is wrong.
#
#   scripts/mutants.sh              every mutant in scripts/mutants/
#   scripts/mutants.sh NAME ...     the mutants whose file names contain NAME
#
# Each mutant is a patch in scripts/mutants/ with two header lines: what it
# breaks ("Mutant: …") and what should catch it, either
#   "Tests: A|B|C/testName"  exact suite names (or Suite/test), `|`-separated:
#                            the run is `swift test --filter '\.(A|B)/|\.C/testName\('`,
#                            so HistoryTests never also selects EtcdHistoryTests
#   "Command: …"             a shell command run from the package root, which
#                            exits non-zero when it catches the mutant (the
#                            crash-state explorer).
# The script checks out the current commit in a work tree of its own
# (.build/mutants/work; your files are never touched), runs every mutant's
# tests and commands on the unmutated code first (they must pass there, with
# no test skipped, or a kill would mean nothing), then applies one patch,
# builds, runs its check, and reverts. A mutant is killed when a test fails
# (every failing test is named) or the command fails; it survives when all
# pass — then a test is missing. A test of a mutant that was skipped (etcd
# not installed, not root) counts as neither: the row says SKIPPED and the
# run fails. It prints a table, and exits non-zero if any mutant survived or
# was not checked, or a patch no longer applies. Logs go to .build/mutants/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

root=$PWD
base=.build/mutants
work=$base/work
logs=$base/logs
mkdir -p "$logs"
git worktree remove --force "$work" >/dev/null 2>&1 || rm -rf "$work"
git worktree prune
git worktree add --detach --force "$work" HEAD >/dev/null
trap 'git -C "$root" worktree remove --force "$work" >/dev/null 2>&1 || true' EXIT
# One build directory across runs: each mutant rebuilds only what it touches.
scratch=$root/$base/build

patches=()
for patch in scripts/mutants/*.patch; do
    if [[ $# -eq 0 ]]; then
        patches+=("$patch")
    else
        for name in "$@"; do
            [[ $patch == *"$name"* ]] && patches+=("$patch") && break
        done
    fi
done
[[ ${#patches[@]} -gt 0 ]] || { echo "mutants: no mutant matches $*" >&2; exit 2; }

echo "mutants: building the unmutated code"
if ! (cd "$work" && swift build --build-tests --scratch-path "$scratch") >"$logs/build.log" 2>&1; then
    echo "mutants: the unmutated code does not build; see $logs/build.log" >&2
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

# A kill means something only if the same checks pass on the real code.
filters=()
commands=()
for patch in "${patches[@]}"; do
    tests=$(sed -n 's/^Tests: //p' "$patch" | head -n 1)
    command=$(sed -n 's/^Command: //p' "$patch" | head -n 1)
    if [[ -n $tests ]]; then filters+=("$(filter_of "$tests")"); fi
    if [[ -n $command ]]; then commands+=("$command"); fi
    if [[ -z $tests && -z $command ]]; then
        echo "mutants: $patch has neither a Tests: nor a Command: line" >&2
        exit 2
    fi
done
if [[ ${#filters[@]} -gt 0 ]]; then
    all_tests=$(IFS='|'; echo "${filters[*]}")
    echo "mutants: running every mutant's tests on the unmutated code"
    if ! (cd "$work" && swift test --skip-build --scratch-path "$scratch" --filter "$all_tests") \
        >"$logs/unmutated.log" 2>&1; then
        echo "mutants: the tests fail on the unmutated code; see $logs/unmutated.log" >&2
        exit 1
    fi
    skipped=$(skipped_in "$logs/unmutated.log")
    if [[ -n $skipped ]]; then
        echo "mutants: tests were skipped on the unmutated code, so they could kill nothing:" >&2
        echo "$skipped" >&2
        exit 1
    fi
    echo "mutants: $(grep -cE '^[^ ]+ Test .*\) passed after' "$logs/unmutated.log") tests pass unmutated"
fi
for command in "${commands[@]}"; do
    echo "mutants: running $command on the unmutated code"
    if ! (cd "$work" && bash -c "$command") >>"$logs/unmutated-commands.log" 2>&1; then
        echo "mutants: '$command' fails on the unmutated code; see $logs/unmutated-commands.log" >&2
        exit 1
    fi
done

rows=()
failed=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .patch)
    what=$(sed -n 's/^Mutant: //p' "$patch" | head -n 1)
    tests=$(sed -n 's/^Tests: //p' "$patch" | head -n 1)
    command=$(sed -n 's/^Command: //p' "$patch" | head -n 1)
    log=$logs/$name.log
    if ! git -C "$work" apply "$root/$patch" 2>"$log"; then
        rows+=("$name|does not apply (refresh the patch)|$what")
        failed=1
        continue
    fi
    started=$SECONDS
    if [[ -n $command ]]; then
        if (cd "$work" && bash -c "$command") >>"$log" 2>&1; then
            outcome="SURVIVED"
            failed=1
        else
            outcome="killed by \`$command\`"
        fi
    elif ! (cd "$work" && swift build --build-tests --scratch-path "$scratch") >>"$log" 2>&1; then
        outcome="does not build"
        failed=1
    elif (cd "$work" && swift test --skip-build --scratch-path "$scratch" \
        --filter "$(filter_of "$tests")") >>"$log" 2>&1; then
        outcome="SURVIVED"
        failed=1
        [[ -n $(skipped_in "$log") ]] && outcome="SKIPPED: not checked"
    else
        # Every test that failed, by name.
        killers=$(grep -oE '^[^ ]+ Test [^ ]+\)( with [0-9]+ test cases)? failed after' "$log" |
            sed -E 's/^[^ ]+ Test //; s/\(.*$//' | sort -u | paste -sd, - | sed 's/,/, /g')
        outcome="killed by ${killers:-a failing run (see $log)}"
        if [[ -n $(skipped_in "$log") ]]; then
            outcome="$outcome; SKIPPED some of its tests"
            failed=1
        fi
    fi
    git -C "$work" apply -R "$root/$patch"
    rows+=("$name|$outcome ($((SECONDS - started)) s)|$what")
    echo "mutants: $name: $outcome"
done

echo
echo "| mutant | outcome | what it breaks |"
echo "|---|---|---|"
for row in "${rows[@]}"; do
    IFS='|' read -r name outcome what <<<"$row"
    echo "| $name | $outcome | $what |"
done
exit "$failed"
