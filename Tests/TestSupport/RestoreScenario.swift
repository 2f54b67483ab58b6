import Preferences
import Testing

/// The restore scenario every backend runs (H5): 30 edits of eight keys,
/// then a restore to #0, #1, #7, #19 and the change before the last, each
/// checked in what the backend holds (read by `stored`, never through the
/// store), with its difference announced beforehand, and forward again
/// each time as one more change. Every change, restores included, is then
/// in one history with no gaps, as `reopen` (a new handle) reads it, and a
/// restore to the state held writes nothing.
package func runRestoreScenario(
    _ store: PreferencesStore,
    stored:
        @escaping @Sendable () async throws -> (
            sequence: Int64, values: [String: PreferenceValue]
        ),
    reopen: @escaping @Sendable () async throws -> PreferencesStore,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    var states: [Int64: [String: PreferenceValue]] = [0: [:]]
    for step in 1...30 {
        try await store.edit { prefs in
            prefs[raw: "k\(step % 7)"] = step % 5 == 0 ? nil : .int(Int64(step))
            if step % 4 == 0 { prefs[.language] = "l\(step)" }
        }
        states[store.snapshot.sequence] = store.snapshot.values
    }
    let latest = store.snapshot.sequence
    let targets = [0, 1, 7, 19, latest - 1] as [Int64]
    for target in targets {
        let current = try await stored()
        let difference = try await store.restoreDifference(to: target)
        let restored = try #require(
            try await store.restore(to: target), "restore to #\(target)",
            sourceLocation: sourceLocation)
        #expect(restored == current.sequence + 1, sourceLocation: sourceLocation)
        let back = try await stored()
        #expect(back.sequence == restored, sourceLocation: sourceLocation)
        #expect(
            back.values == states[target], "restore to #\(target)", sourceLocation: sourceLocation)
        #expect(
            Set(difference.keys)
                == Set(current.values.keys).union(states[target]!.keys).filter {
                    current.values[$0] != states[target]![$0]
                }, "the difference announced for #\(target)", sourceLocation: sourceLocation)
        // Forward again to where it was before, as one more change.
        #expect(
            try await store.restore(to: current.sequence) == restored + 1,
            sourceLocation: sourceLocation)
        #expect(
            try await stored().values == current.values, "forward again from #\(target)",
            sourceLocation: sourceLocation)
    }
    let last = latest + Int64(2 * targets.count)
    #expect(
        try await reopen().history().entries.map(\.sequence) == Array(1...last),
        sourceLocation: sourceLocation)
    // Restoring the state the store already holds writes nothing.
    let unchanged = try await stored()
    #expect(try await store.restore(to: last) == nil, sourceLocation: sourceLocation)
    #expect(try await stored().sequence == unchanged.sequence, sourceLocation: sourceLocation)
}

/// Sets `counter` to 101…120 on a store put back from a copy taken at
/// change #20, and expects its history after each change to run from #1
/// with no gap; returns the history after the last.
package func setTwentyChangesOnACopy(_ store: PreferencesStore) async throws -> StoreHistory {
    var history = try await store.history()
    for (sequence, value) in zip(Int64(21)...40, 101...120) {
        try await store.set(.counter, value)
        history = try await store.history()
        #expect(
            history.entries.map(\.sequence) == Array(1...sequence),
            "after change #\(sequence): \(history.entries.map(\.sequence))")
    }
    return history
}
