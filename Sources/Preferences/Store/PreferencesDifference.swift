/// What it takes to make a store hold a set of desired values: each key
/// whose value would change, with its value now and the value it would get
/// (`prefs diff` and `prefs apply` in <doc:CommandLineTool>).
///
/// ``PreferencesStore/difference(to:prune:)`` computes one without changing
/// anything; ``PreferencesStore/apply(_:prune:)`` makes the change and
/// returns what it changed.
///
/// ```swift
/// let difference = store.difference(to: ["max_connections": 1000, "motd": "hello"])
/// print(difference)
/// // max_connections: 100 → 1000
/// // motd: (unset) → "hello"
/// if !difference.isEmpty { try await store.apply(["max_connections": 1000, "motd": "hello"]) }
/// ```
public struct PreferencesDifference: Sendable, Hashable, CustomStringConvertible {
    /// One key's value now and the value it would get.
    public struct Change: Sendable, Hashable {
        /// The value now; nil when the key is not set.
        public var old: PreferenceValue?
        /// The value it would get; nil when it would be removed (pruning).
        public var new: PreferenceValue?

        /// A change from `old` to `new`.
        public init(old: PreferenceValue?, new: PreferenceValue?) {
            self.old = old
            self.new = new
        }
    }

    /// The keys whose value differs, by key. A key whose value is already
    /// the desired one is not listed.
    public var changes: [String: Change]

    /// The sequence number of the change that applied this difference
    /// (``PreferencesStore/apply(_:prune:)``); nil for a difference that
    /// was only computed, or one that was empty, so that nothing was written.
    public var appliedAs: Int64?

    /// A difference made of `changes`, for tests and for building one by hand.
    public init(changes: [String: Change], appliedAs: Int64? = nil) {
        self.changes = changes
        self.appliedAs = appliedAs
    }

    /// What changes from `current` to `desired`: every key of `desired`
    /// whose value differs from (or is absent in) `current`, and with
    /// `prune`, every key of `current` that `desired` does not name, to be
    /// removed.
    ///
    /// ```swift
    /// let difference = PreferencesDifference(
    ///     from: ["a": 1, "b": 2], to: ["a": 1, "c": 3], prune: true)
    /// difference.lines   // ["b: 2 → (unset)", "c: (unset) → 3"]
    /// ```
    public init(
        from current: [String: PreferenceValue], to desired: [String: PreferenceValue],
        prune: Bool = false
    ) {
        var changes: [String: Change] = [:]
        for (key, value) in desired {
            let old = current[key]
            if old != value { changes[key] = Change(old: old, new: value) }
        }
        if prune {
            for (key, value) in current where desired[key] == nil {
                changes[key] = Change(old: value, new: nil)
            }
        }
        self.init(changes: changes)
    }

    /// Whether nothing would change.
    public var isEmpty: Bool { changes.isEmpty }

    /// The changed keys, sorted by their UTF-8 bytes (the order of the store
    /// file and of `prefs list`).
    public var keys: [String] { changes.keys.sorted(by: JSONText.precedesByBytes) }

    /// The values the keys get: those set (the keys removed left out).
    public var setValues: [String: PreferenceValue] { changes.compactMapValues(\.new) }

    /// The keys removed (pruning), sorted by their UTF-8 bytes.
    public var removedKeys: [String] { keys.filter { changes[$0]?.new == nil } }

    /// One line a changed key, sorted by key bytes: `KEY: OLD → NEW`, values
    /// as compact JSON and `(unset)` for a key that is not set or would be
    /// removed — as `prefs diff` prints them.
    ///
    /// ```
    /// max_connections: 100 → 1000
    /// motd: (unset) → "hello"
    /// retired: true → (unset)
    /// ```
    public var lines: [String] {
        keys.map { key in
            let change = changes[key]!
            return "\(key): \(Self.shown(change.old)) → \(Self.shown(change.new))"
        }
    }

    /// ``lines`` joined by newlines (empty when nothing changes).
    public var description: String { lines.joined(separator: "\n") }

    private static func shown(_ value: PreferenceValue?) -> String {
        value?.jsonText ?? "(unset)"
    }
}
