#!/usr/bin/env bash
# Applies deliberate bugs (mutants) to the code one at a time and shows which
# test catches each: the proof that the tests fail when the code is wrong.
#
#   scripts/mutants.sh              every mutant in scripts/mutants/
#   scripts/mutants.sh NAME ...     the mutants whose file names contain NAME
#
# Each mutant is a patch in scripts/mutants/ with two header lines: what it
# breaks ("Mutant: …") and the tests that should catch it ("Tests: …", a
# `swift test --filter` pattern). The script checks out the current commit in
# a work tree of its own (.build/mutants/work; your files are never touched),
# runs every mutant's tests on the unmutated code first (they must pass
# there, or a kill would mean nothing), then applies one patch, builds, runs
# those tests, and reverts. A mutant is killed
# when a test fails; it survives when they all pass — then a test is missing.
# It prints a table, and exits non-zero if any mutant survived or a patch no
# longer applies. Logs go to .build/mutants/logs/.
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

# A kill means something only if the same tests pass on the real code.
filters=()
for patch in "${patches[@]}"; do
    filters+=("$(sed -n 's/^Tests: //p' "$patch" | head -n 1)")
done
all_tests=$(IFS='|'; echo "${filters[*]}")
echo "mutants: running every mutant's tests on the unmutated code"
if ! (cd "$work" && swift test --skip-build --scratch-path "$scratch" --filter "$all_tests") \
    >"$logs/unmutated.log" 2>&1; then
    echo "mutants: the tests fail on the unmutated code; see $logs/unmutated.log" >&2
    exit 1
fi
echo "mutants: $(grep -cE '^[^ ]+ Test .*\) passed after' "$logs/unmutated.log") tests pass unmutated"

rows=()
failed=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .patch)
    what=$(sed -n 's/^Mutant: //p' "$patch" | head -n 1)
    tests=$(sed -n 's/^Tests: //p' "$patch" | head -n 1)
    log=$logs/$name.log
    if ! git -C "$work" apply "$root/$patch" 2>"$log"; then
        rows+=("$name|does not apply (refresh the patch)|$what")
        failed=1
        continue
    fi
    started=$SECONDS
    if ! (cd "$work" && swift build --build-tests --scratch-path "$scratch") >>"$log" 2>&1; then
        outcome="does not build"
        failed=1
    elif (cd "$work" && swift test --skip-build --scratch-path "$scratch" --filter "$tests") \
        >>"$log" 2>&1; then
        outcome="SURVIVED"
        failed=1
    else
        # The first test that failed, by name.
        killer=$(grep -m 1 -oE 'Test [^ ]+\)( with [0-9]+ test cases)? failed after' "$log" |
            sed -E 's/^Test //; s/( with [0-9]+ test cases)? failed after$//' || true)
        outcome="killed by ${killer:-a failing run (see $log)}"
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
