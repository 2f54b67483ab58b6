/// What the store does with a file that is not a valid preferences file
/// (S8, <doc:StoreGuarantees>): not JSON, the wrong envelope, an unknown format, or over the
/// limits. No policy destroys the bad bytes; I/O errors are never treated
/// as corruption.
///
/// The policy applies when a store is opened (including a further handle on
/// a file already open). It never applies at write time (S17, <doc:StoreGuarantees>): a write
/// that finds the file corrupt after it was loaded — most likely an editor
/// half-way through saving in place — re-reads it a few times over about
/// 150 ms, then fails with ``PreferencesError/corrupted(file:reason:)``,
/// leaving the file's bytes and the store's last good state as they are.
///
/// ```swift
/// let store = try await PreferencesStore(fileURL: url, corruption: .backupAndReset)
/// ```
public struct CorruptionPolicy: Sendable {
    enum Action: Sendable {
        case fail
        case backupAndReset
        case replace(@Sendable (PreferencesError) -> [String: PreferenceValue])
    }

    let action: Action

    /// Whether the policy only throws (``fail``), so a corrupt file needs
    /// neither the lock nor a write.
    var failsOnly: Bool {
        if case .fail = action { return true }
        return false
    }

    /// Throw ``PreferencesError/corrupted(file:reason:)`` and touch nothing (the default).
    public static let fail = CorruptionPolicy(action: .fail)

    /// Rename the bad file to `<name>.corrupt-<UTC timestamp>` and start empty.
    ///
    /// The reset is written as change #1 of a new history (<doc:HistoryAndUndo>),
    /// whose entry names where the bad bytes went; the earlier history is
    /// kept aside, never shown as the new one's.
    public static let backupAndReset = CorruptionPolicy(action: .backupAndReset)

    /// Rename the bad file as ``backupAndReset`` does, then store the values
    /// `makeValues` returns (it receives the corruption error), as the
    /// changes of the reset's history entry.
    public static func replace(
        _ makeValues: @escaping @Sendable (PreferencesError) -> [String: PreferenceValue]
    ) -> CorruptionPolicy {
        CorruptionPolicy(action: .replace(makeValues))
    }
}
