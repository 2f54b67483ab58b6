import Testing

@testable import Preferences

/// Group commit's rules, driven by hand: no backend, no store, no queue. Each
/// test plays the write loop's part — it answers each action the machine
/// returns with what the loop would have seen — and checks the action
/// sequence and each edit's outcome.
@Suite struct GroupCommitMachineTests {
    struct Refused: Error {}

    /// An edit: a named transform.
    struct Step: GroupCommitEdit {
        let name: String
        let body: (inout MutablePreferences) throws -> any Sendable

        init(_ name: String, _ body: @escaping (inout MutablePreferences) throws -> any Sendable) {
            self.name = name
            self.body = body
        }

        func apply(to working: inout MutablePreferences) throws -> any Sendable {
            try body(&working)
        }

        /// Adds one to `n`, and fails where `n` is not stored.
        static var increment: Step {
            Step("increment") { prefs in
                guard case .int(let value)? = prefs[raw: "n"] else { throw Refused() }
                prefs[raw: "n"] = .int(value + 1)
                return value + 1
            }
        }

        /// Sets `key` to `value`.
        static func set(_ key: String, _ value: PreferenceValue) -> Step {
            Step("set \(key)") { prefs in
                prefs[raw: key] = value
                return ()
            }
        }
    }

    typealias Machine = GroupCommitMachine<Step>

    static let limits = PreferencesLimits()

    /// Answers every look at the queue with one more edit, as a steady
    /// stream of edits would, and every encoding and write with success;
    /// returns the actions in order (a take shown as the edit it got).
    static func runUnderAStream(
        _ machine: inout Machine, over base: PreferencesSnapshot, from first: Int = 0,
        writeSucceeds: Bool = true
    ) -> [String] {
        var trace: [String] = []
        var action = machine.start(over: base, limits: limits)
        var next = first
        while true {
            // A budget that never runs out.
            if trace.count > 200 {
                trace.append("…")
                return trace
            }
            switch action {
            case .takeLateEdits:
                next += 1
                trace.append("take")
                action = machine.take(late: [.set("late\(next)", .int(Int64(next)))])
            case .encode:
                trace.append("encode")
                action = machine.encoded()
            case .write:
                trace.append("write")
                action = machine.wrote(writeSucceeds)
            case .readAgain:
                trace.append("readAgain")
                return trace
            case .finish:
                trace.append("finish")
                return trace
            case .fallBack:
                trace.append("fallBack")
                return trace
            }
        }
    }

    /// The keys an ``GroupCommitMachine/Action/encode(changedKeys:)`` names
    /// (a key changed twice may be named twice); nil for any other action.
    static func keysToEncode(_ action: Machine.Action) -> Set<String>? {
        guard case .encode(let keys) = action else { return nil }
        return Set(keys ?? [])
    }

    /// `["take", "take", "encode"]` as `"take×2 encode"`.
    static func summary(_ trace: [String]) -> String {
        var parts: [String] = []
        var index = trace.startIndex
        while index < trace.endIndex {
            let action = trace[index]
            var end = index
            while end < trace.endIndex && trace[end] == action { end += 1 }
            let count = end - index
            parts.append(count == 1 ? action : "\(action)×\(count)")
            index = end
        }
        return parts.joined(separator: " ")
    }

    @Test func aLoneEditLooksAtTheQueueBeforeAndAfterEncodingThenWrites() throws {
        var machine = Machine([.set("a", 1)], takingLateEdits: true)
        #expect(machine.start(over: PreferencesSnapshot(), limits: Self.limits) == .takeLateEdits)
        #expect(machine.take(late: []) == .encode(changedKeys: ["a"]))
        #expect(machine.encoded() == .takeLateEdits)
        #expect(machine.take(late: []) == .write)
        #expect(machine.wrote(true) == .finish)
        #expect(machine.batch.count == 1)
        #expect(try machine.outcomes[0].get() is Void)
        #expect(machine.working.values == ["a": 1])
    }

    /// Before each encoding, at most `maxLateTakes` (8) looks at the queue
    /// that found edits; at most `maxReencodes` (2) encodings again; and each
    /// encoding again gives the late-take budget back. A steady stream thus
    /// holds a write back by 27 edits at most.
    @Test func aStreamOfLateEditsStopsAtEightTakesPerEncodingAndTwoReencodings() {
        #expect(Machine.maxLateTakes == 8)
        #expect(Machine.maxReencodes == 2)
        var machine = Machine([.set("a", 1)], takingLateEdits: true)
        let trace = Self.runUnderAStream(&machine, over: PreferencesSnapshot())
        // Each "take" here found an edit: 8 before the first encoding; then
        // the look after it found one (a re-encoding), and 8 more; twice.
        #expect(
            Self.summary(trace)
                == "take×8 encode take×9 encode take×9 encode write finish")
        #expect(machine.batch.count == 1 + 8 + 9 + 9)
        #expect(machine.batch.count == (Machine.maxLateTakes + 1) * (Machine.maxReencodes + 1))
        #expect(machine.outcomes.count == machine.batch.count)
        #expect(machine.working.values.count == machine.batch.count)
    }

    /// A lost compare-and-swap starts over with the late-take budget given
    /// back, but the re-encodings already spent stay spent.
    @Test func aRetryGivesTheLateTakesBackButNotTheReencodings() {
        var machine = Machine([.set("a", 1)], takingLateEdits: true)
        let first = Self.runUnderAStream(
            &machine, over: PreferencesSnapshot(), writeSucceeds: false)
        #expect(
            Self.summary(first)
                == "take×8 encode take×9 encode take×9 encode write readAgain")
        let taken = machine.batch.count
        let second = Self.runUnderAStream(
            &machine, over: PreferencesSnapshot(values: ["other": "theirs"]), from: taken)
        #expect(Self.summary(second) == "take×8 encode write finish")
        #expect(machine.batch.count == taken + 8)
    }

    /// A commit that takes no late edits (one edit alone, after a fallback)
    /// never looks at the queue.
    @Test func aCommitWithoutLateEditsNeverLooksAtTheQueue() {
        var machine = Machine([.set("a", 1)], takingLateEdits: false)
        let trace = Self.runUnderAStream(&machine, over: PreferencesSnapshot())
        #expect(trace == ["encode", "write", "finish"])
        #expect(machine.batch.count == 1)
    }

    @Test func aLateEditJoinsTheBatchAndSeesTheEditsBeforeIt() throws {
        let double = Step("double a") { prefs in
            guard case .int(let value)? = prefs[raw: "a"] else { throw Refused() }
            prefs[raw: "a"] = .int(value * 2)
            return value * 2
        }
        var machine = Machine([.set("a", 21)], takingLateEdits: true)
        #expect(machine.start(over: PreferencesSnapshot(), limits: Self.limits) == .takeLateEdits)
        #expect(machine.take(late: [double]) == .takeLateEdits)
        #expect(Self.keysToEncode(machine.take(late: [])) == ["a"])
        #expect(machine.batch.map(\.name) == ["set a", "double a"])
        #expect(try machine.outcomes[1].get() as? Int64 == 42)
        #expect(machine.working.values == ["a": 42])
        // An edit queued while the document was encoded makes it stale.
        #expect(machine.encoded() == .takeLateEdits)
        #expect(machine.take(late: [double]) == .takeLateEdits)
        #expect(Self.keysToEncode(machine.take(late: [])) == ["a"])
        #expect(try machine.outcomes[2].get() as? Int64 == 84)
    }

    /// An edit that throws, or whose setter failed, is undone alone: the
    /// edits after it see the state without it, and keep their outcomes.
    @Test func aFailedEditIsRolledBackAloneAndTheOthersKeepTheirOutcomes() throws {
        let base = PreferencesSnapshot(values: ["kept": "old", "gone": 1])
        let throwing = Step("throws") { prefs in
            prefs[raw: "b"] = 2
            prefs[raw: "kept"] = "changed"
            prefs[raw: "gone"] = nil
            throw Refused()
        }
        let reader = Step("reads") { prefs in
            prefs[raw: "c"] = 3
            return [prefs[raw: "b"], prefs[raw: "kept"], prefs[raw: "gone"]]
        }
        var machine = Machine([.set("a", 1), throwing, reader], takingLateEdits: false)
        #expect(machine.start(over: base, limits: Self.limits) != .finish)
        #expect(try machine.outcomes[0].get() is Void)
        #expect(throws: Refused.self) { try machine.outcomes[1].get() }
        let seen = try #require(try machine.outcomes[2].get() as? [PreferenceValue?])
        #expect(seen == [nil, "old", 1])
        #expect(machine.working.values == ["kept": "old", "gone": 1, "a": 1, "c": 3])
    }

    /// A batch whose edits all fail, or change nothing, finishes without
    /// encoding: it writes nothing.
    @Test func aBatchThatChangesNothingFinishesWithoutEncoding() {
        let base = PreferencesSnapshot(values: ["a": 1])
        let failing = Step("fails") { prefs in
            prefs[raw: "b"] = 2
            throw Refused()
        }
        var machine = Machine([.set("a", 1), failing], takingLateEdits: true)
        #expect(machine.start(over: base, limits: Self.limits) == .takeLateEdits)
        #expect(machine.take(late: []) == .finish)
    }

    /// A lost compare-and-swap applies the whole batch again to the state
    /// read again: each outcome is the one on that state.
    @Test func aLostCompareAndSwapAppliesTheBatchAgainToTheNewState() throws {
        var machine = Machine([.increment, .set("a", 1)], takingLateEdits: false)
        // Ours read no `n`: the increment fails there.
        #expect(machine.start(over: PreferencesSnapshot(), limits: Self.limits) != .finish)
        #expect(throws: Refused.self) { try machine.outcomes[0].get() }
        #expect(machine.encoded() == .write)
        #expect(machine.wrote(false) == .readAgain)
        // Someone else wrote n = 5 meanwhile.
        let theirs = PreferencesSnapshot(values: ["n": 5, "other": "theirs"])
        #expect(Self.keysToEncode(machine.start(over: theirs, limits: Self.limits)) == ["n", "a"])
        #expect(try machine.outcomes[0].get() as? Int64 == 6)
        #expect(machine.working.values == ["n": 6, "other": "theirs", "a": 1])
        #expect(machine.encoded() == .write)
        #expect(machine.wrote(true) == .finish)
    }

    /// An edit that failed on a state whose write was then refused did not
    /// fail for good: if reading the state again fails, every edit gets that
    /// failure, not the one worked out on the state given up.
    @Test func aFailureAfterALostCompareAndSwapIsEveryEditsOwn() throws {
        struct Unreadable: Error {}
        var machine = Machine([.increment, .set("a", 1)], takingLateEdits: false)
        #expect(machine.start(over: PreferencesSnapshot(), limits: Self.limits) != .finish)
        #expect(throws: Refused.self) { try machine.outcomes[0].get() }
        #expect(machine.encoded() == .write)
        #expect(machine.wrote(false) == .readAgain)
        // Reading the state again fails before the batch is applied again.
        #expect(machine.failed(Unreadable()) == .finish)
        #expect(throws: Unreadable.self) { try machine.outcomes[0].get() }
        #expect(throws: Unreadable.self) { try machine.outcomes[1].get() }
    }

    /// A document too large for one write (``PreferencesError/limitExceeded``)
    /// sends a batch of several edits back to one write each, where only the
    /// edit that makes it too large fails; any other failure, or one edit
    /// alone, fails every edit that had succeeded and keeps the failures.
    @Test func aResultTooLargeFallsBackToOneWritePerEditAndOnlyTheOffenderFails() throws {
        let tooLarge = PreferencesError.limitExceeded(file: "prefs.json", reason: "too large")
        let edits: [Step] = [.set("a", 1), .set("huge", "x"), .set("b", 2)]
        var machine = Machine(edits, takingLateEdits: true)
        #expect(machine.start(over: PreferencesSnapshot(), limits: Self.limits) == .takeLateEdits)
        #expect(Self.keysToEncode(machine.take(late: [])) == ["a", "huge", "b"])
        #expect(machine.failed(tooLarge) == .fallBack)
        #expect(machine.batch.map(\.name) == ["set a", "set huge", "set b"])

        // The loop's part: each edit alone, where encoding a document
        // holding "huge" fails.
        var outcomes: [Result<any Sendable, any Error>] = []
        for edit in machine.batch {
            var alone = Machine([edit], takingLateEdits: false)
            var action = alone.start(over: PreferencesSnapshot(), limits: Self.limits)
            var steps = 0
            run: while action != .finish {
                steps += 1
                switch action {
                case .encode where steps < 10:
                    action =
                        alone.working.values["huge"] == nil
                        ? alone.encoded() : alone.failed(tooLarge)
                case .write where steps < 10:
                    action = alone.wrote(true)
                default:
                    Issue.record("\(edit.name) alone: \(action) after \(steps) steps")
                    break run
                }
            }
            outcomes.append(alone.outcomes[0])
        }
        #expect(try outcomes[0].get() is Void)
        #expect(throws: PreferencesError.self) { try outcomes[1].get() }
        #expect(try outcomes[2].get() is Void)
    }

    @Test func anyOtherFailureFailsTheEditsThatSucceededAndKeepsEachFailure() throws {
        struct DiskFull: Error {}
        let refusing = Step("refuses") { _ in throw Refused() }
        var machine = Machine([.set("a", 1), refusing], takingLateEdits: false)
        #expect(machine.start(over: PreferencesSnapshot(), limits: Self.limits) != .finish)
        #expect(machine.failed(DiskFull()) == .finish)
        #expect(throws: DiskFull.self) { try machine.outcomes[0].get() }
        #expect(throws: Refused.self) { try machine.outcomes[1].get() }

        // A single edit too large has no fallback: it fails.
        let tooLarge = PreferencesError.limitExceeded(file: "prefs.json", reason: "too large")
        var alone = Machine([.set("a", 1)], takingLateEdits: false)
        #expect(alone.start(over: PreferencesSnapshot(), limits: Self.limits) != .finish)
        #expect(alone.failed(tooLarge) == .finish)
        #expect(throws: PreferencesError.self) { try alone.outcomes[0].get() }
    }
}
