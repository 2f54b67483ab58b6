#!/usr/bin/env bash
# Applies deliberate bugs (mutants) to the code one at a time and shows which
# test catches each, and how: the proof that the tests fail when the code is
# wrong.
#
#   scripts/mutants.sh              every mutant in scripts/mutants/
#   scripts/mutants.sh NAME ...     the mutants whose file names contain NAME
#
# Each mutant is a patch in scripts/mutants/ with header lines saying what
# it breaks ("Mutant: …") and what should catch it, either
#   "Tests: A/t1|B/t2"   the tests that kill it, each by exact suite and
#                        test, `|`-separated; each runs alone, as
#                        `swift test --filter '\.A/t1\('`
#   "Command: …"         a shell command run from the package root, which
#                        exits 1 when it catches the mutant (the crash-state
#                        explorer, which also prints the violation).
# and, optionally, "Needs: …", what its tests need to run (root, etcd): a
# test that cannot run here is reported skipped, never counted as a kill.
#
# The script checks out the current commit in a work tree of its own
# (.build/mutants/work, kept between runs; your files are never touched)
# and builds it. Every
# named test must exist and pass on the unmutated code, with no skip, and
# every command must exit 0 there, or a kill would mean nothing. Then it
# applies one patch, builds, runs each named test alone, and reverts.
#
# A mutant is KILLED only when the mutated code built and at least one named
# test failed on an assertion: Swift Testing recorded an issue (an
# expectation or requirement that failed, or an error thrown out of the
# test) that is not a deadline running out. For each kill the row names the
# test and the failing assertion's place and message. None of these is a
# kill, and each is reported as what it is, and fails the run:
#   does not build        the mutated code did not compile;
#   SKIPPED               a named test was skipped (its reason is shown);
#   TIMEOUT               a test run went past its wall-clock limit
#                         (MUTANTS_TIME_LIMIT seconds, 300 by default);
#   CRASHED               the test runner died (a signal, a "Fatal error")
#                         with no failing assertion;
#   DEADLINE ONLY         the test's first issue was a wait that ran out
#                         (an error that says "deadline exceeded", Swift
#                         Testing's time limit; what fails after it fails
#                         because of it): the code was slow or silent, which
#                         tells nothing about what it would have done;
#   SURVIVED              every named test passed: a test is missing.
# A poll that gives up and whose result is then asserted (`eventually` in
# the test support) cannot be told from an assertion here: a killing test
# should await an event that comes whatever the code does, then assert.
# It prints the commit, a table, and exits non-zero unless every mutant was
# killed. Logs go to .build/mutants/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

root=$PWD
base=.build/mutants
work=$base/work
logs=$base/logs
limit=${MUTANTS_TIME_LIMIT:-300}
mkdir -p "$logs"
commit=$(git rev-parse --short HEAD)
# The work tree stays between runs and is only checked out afresh, so that
# files that did not change keep their times and the next build compiles
# only what changed (a new work tree would rebuild everything).
if [[ -d $work && $(git -C "$work" rev-parse --show-toplevel 2>/dev/null) == "$root/$work" ]]; then
    git -C "$work" checkout --quiet --force --detach "$commit"
    git -C "$work" clean -fdxq
else
    rm -rf "$work"
    git worktree prune
    git worktree add --detach --force "$work" "$commit" >/dev/null
fi
# A patch applied when the run is stopped is taken back.
applied=""
trap '[[ -z $applied ]] || git -C "$work" apply -R "$root/$applied" 2>/dev/null || true' EXIT
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

header() { sed -n "s/^$2: //p" "$1" | head -n 1; }

# Every patch names what catches it; every test by exact suite and test.
all_tests=()
commands=()
for patch in "${patches[@]}"; do
    tests=$(header "$patch" Tests)
    command=$(header "$patch" Command)
    if [[ -z $tests && -z $command ]]; then
        echo "mutants: $patch has neither a Tests: nor a Command: line" >&2
        exit 2
    fi
    if [[ -n $tests ]]; then
        IFS='|' read -ra entries <<<"$tests"
        for entry in "${entries[@]}"; do
            if [[ ! $entry =~ ^[A-Za-z_][A-Za-z0-9_]*/[A-Za-z_][A-Za-z0-9_]*$ ]]; then
                echo "mutants: $patch names '$entry'; name each test as Suite/test" >&2
                exit 2
            fi
            all_tests+=("$entry")
        done
    fi
    if [[ -n $command ]]; then commands+=("$command"); fi
done

echo "mutants: commit $commit; building the unmutated code"
if ! (cd "$work" && swift build --build-tests --scratch-path "$scratch") >"$logs/build.log" 2>&1; then
    echo "mutants: the unmutated code does not build; see $logs/build.log" >&2
    exit 1
fi

# An issue that is a wait running out, not an assertion about the outcome:
# the test support's DeadlineExceeded ("deadline exceeded: …") and Swift
# Testing's own time limit.
deadline_issue='deadline exceeded: |Time limit was exceeded'

# Runs the test Suite/test alone, its output in LOG, under the wall-clock
# limit; prints "STATUS|DETAIL", STATUS one of passed, killed, deadline,
# skipped, timeout, crashed, absent.
run_test() {
    local entry=$1 log=$2 status=0 skipped first place message
    (cd "$work" && timeout --kill-after=20 "$limit" swift test --skip-build \
        --scratch-path "$scratch" --filter "\\.${entry}\\(") >"$log" 2>&1 || status=$?
    if [[ $status -eq 124 || $status -eq 137 ]]; then
        echo "timeout|no result within $limit s"
        return
    fi
    skipped=$(grep -E '^[^ ]+ (Test|Suite) ' "$log" | grep -m 1 -E ' skipped(: |\.?$)' || true)
    if [[ -n $skipped ]]; then
        echo "skipped|${skipped#* }"
        return
    fi
    # The first issue decides: assertions that fail after a wait ran out
    # fail because of it.
    first=$(grep -m 1 -E '^[^ ]+ Test .* recorded an issue' "$log" || true)
    if [[ -n $first ]]; then
        place=$(grep -oE '[A-Za-z0-9_+.-]+\.swift:[0-9]+' <<<"$first" | tail -n 1 || true)
        message=${first#*.swift:*:*: }
        if grep -qE "$deadline_issue" <<<"$first"; then
            echo "deadline|${place:-?}: ${message:0:160}"
        else
            echo "killed|${place:-?}: ${message:0:160}"
        fi
        return
    fi
    if ! grep -qE '^[^ ]+ Test run with [0-9]+ test' "$log"; then
        echo "crashed|$(grep -m 1 -E 'Fatal error|signal|Exited' "$log" || echo "exit $status, no end of run")"
        return
    fi
    if ! grep -qE '^[^ ]+ Test .*\) started' "$log"; then
        echo "absent|no test matches \\.${entry}\\("
        return
    fi
    if [[ $status -eq 0 ]]; then
        echo "passed|"
    else
        echo "crashed|exit $status with no failing test"
    fi
}

# A kill means something only if the same tests pass on the real code.
if [[ ${#all_tests[@]} -gt 0 ]]; then
    unique=$(printf '%s\n' "${all_tests[@]}" | sort -u)
    echo "mutants: running each of the $(wc -l <<<"$unique") named tests alone on the unmutated code"
    bad=0
    while read -r entry; do
        result=$(run_test "$entry" "$logs/unmutated-${entry//\//-}.log")
        if [[ ${result%%|*} != passed ]]; then
            echo "mutants: $entry does not pass unmutated: ${result/|/: }" >&2
            bad=1
        fi
    done <<<"$unique"
    if [[ $bad -ne 0 ]]; then
        echo "mutants: fix the tests above first; logs in $logs/unmutated-*.log" >&2
        exit 1
    fi
fi
for command in "${commands[@]}"; do
    echo "mutants: running $command on the unmutated code"
    if ! (cd "$work" && bash -c "$command") >>"$logs/unmutated-commands.log" 2>&1; then
        echo "mutants: '$command' fails on the unmutated code; see $logs/unmutated-commands.log" >&2
        exit 1
    fi
done

rows=()
sep=$'\x1f'
failed=0
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .patch)
    what=$(header "$patch" Mutant)
    tests=$(header "$patch" Tests)
    command=$(header "$patch" Command)
    log=$logs/$name.log
    if git -C "$work" apply "$root/$patch" 2>"$log"; then
        applied=$patch
    else
        rows+=("$name${sep}does not apply (refresh the patch)${sep}${sep}$what")
        failed=1
        continue
    fi
    started=$SECONDS
    killers=()
    others=()
    if [[ -n $command ]]; then
        status=0
        (cd "$work" && timeout --kill-after=20 "$limit" bash -c "$command") >>"$log" 2>&1 || status=$?
        case $status in
            0) outcome="SURVIVED" ;;
            1)
                outcome="killed"
                violation=$(grep -m 1 -E '^  [^ ].*: ' "$log" | sed -E 's/^ +//' || true)
                killers+=("\`$command\` exit 1${violation:+: ${violation:0:160}}")
                ;;
            124 | 137) outcome="TIMEOUT" ;;
            *) outcome="CRASHED (exit $status)" ;;
        esac
    elif ! (cd "$work" && swift build --build-tests --scratch-path "$scratch") >>"$log" 2>&1; then
        outcome="does not build"
    else
        seen=""
        IFS='|' read -ra entries <<<"$tests"
        for entry in "${entries[@]}"; do
            result=$(run_test "$entry" "$logs/$name-${entry//\//-}.log")
            state=${result%%|*}
            detail=${result#*|}
            case $state in
                killed) killers+=("$entry at $detail") ;;
                passed) ;;
                *) others+=("$entry $state${detail:+: $detail}") ;;
            esac
            seen+=" $state"
        done
        if [[ ${#killers[@]} -gt 0 ]]; then
            outcome="killed"
        elif [[ $seen == *skipped* ]]; then
            outcome="SKIPPED"
        elif [[ $seen == *timeout* ]]; then
            outcome="TIMEOUT"
        elif [[ $seen == *crashed* ]]; then
            outcome="CRASHED"
        elif [[ $seen == *deadline* ]]; then
            outcome="DEADLINE ONLY"
        elif [[ $seen == *absent* ]]; then
            outcome="NAMES NO TEST"
        else
            outcome="SURVIVED"
        fi
    fi
    [[ $outcome == killed ]] || failed=1
    git -C "$work" apply -R "$root/$patch"
    applied=""
    how=$( (IFS=';'; echo "${killers[*]:-}${others[*]:+; not kills: ${others[*]}}") | sed 's/;/; /g')
    rows+=("$name${sep}$outcome ($((SECONDS - started)) s)${sep}$how${sep}$what")
    if [[ $outcome == killed ]]; then
        echo "mutants: $name: killed by $how"
    else
        echo "mutants: $name: $outcome${how:+: $how}"
    fi
done

echo
echo "Commit $commit, $(date -u '+%-d %B %Y at %H:%M UTC'); time limit $limit s per test run."
echo
echo "| mutant | outcome | killing tests, and the failing assertion | what it breaks |"
echo "|---|---|---|---|"
for row in "${rows[@]}"; do
    IFS=$sep read -r name outcome how what <<<"$row"
    echo "| $name | $outcome | ${how//|/\\|} | $what |"
done
exit "$failed"
