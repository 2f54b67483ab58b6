/// Making a store hold a set of desired values, as one change: what
/// `prefs diff` and `prefs apply` do (<doc:CommandLineTool>).
extension PreferencesStore {
    /// What ``apply(_:prune:)`` would change, from the current state,
    /// without changing anything. Synchronous: it reads the snapshot in
    /// memory, like every read.
    ///
    /// ```swift
    /// let desired: [String: PreferenceValue] = ["max_connections": 1000, "motd": "hello"]
    /// for line in store.difference(to: desired).lines { print(line) }
    /// // max_connections: 100 → 1000
    /// // motd: (unset) → "hello"
    /// ```
    ///
    /// - Parameters:
    ///   - desired: the values the store should hold, by key.
    ///   - prune: also list the stored keys `desired` does not name, as removed.
    public func difference(to desired: [String: PreferenceValue], prune: Bool = false)
        -> PreferencesDifference
    {
        PreferencesDifference(from: snapshot.values, to: desired, prune: prune)
    }

    /// Makes the store hold `desired`: sets every key whose value differs
    /// and, with `prune`, removes every stored key `desired` does not name —
    /// all in one change (one write, one history entry attributed to
    /// `apply`), or nothing.
    ///
    /// The difference is computed under the store's lock, on the state the
    /// change replaces, so a key another process changed meanwhile is
    /// compared with its new value; the result is what was changed. A store
    /// that already holds `desired` is not written at all: no write, no
    /// history entry, and an empty result.
    ///
    /// ```swift
    /// let applied = try await store.apply(["max_connections": 1000, "motd": "hello"])
    /// if let sequence = applied.appliedAs {
    ///     print("applied \(applied.changes.count) changes as #\(sequence)")
    /// }
    /// ```
    ///
    /// The store checks keys and sizes (``PreferencesLimits``), not types:
    /// check values against a ``PreferencesManifest`` first
    /// (``PreferencesManifest/validate(key:value:)``) when they come from
    /// outside, as `prefs apply` does.
    ///
    /// - Parameters:
    ///   - desired: the values the store should hold, by key.
    ///   - prune: also remove the stored keys `desired` does not name.
    /// - Returns: the keys changed, with their values before and after, and
    ///   the sequence number of the change (``PreferencesDifference/appliedAs``).
    /// - Throws: ``PreferencesError/invalidKey(key:reason:)`` for a key that
    ///   cannot be stored, a limit or I/O error; nothing is written then.
    @discardableResult
    public func apply(_ desired: [String: PreferenceValue], prune: Bool = false) async throws
        -> PreferencesDifference
    {
        try await edit { preferences in
            var difference = PreferencesDifference(
                from: preferences.values, to: desired, prune: prune)
            guard !difference.isEmpty else { return difference }
            try preferences.merge(difference.setValues)
            for key in difference.removedKeys { preferences.remove(key) }
            preferences.attribute(to: "apply")
            difference.appliedAs = preferences.baseHistory.sequence + 1
            return difference
        }
    }
}
