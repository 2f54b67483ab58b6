/// What a store's handles in this process are doing, for a service's
/// metrics (``PreferencesStore/activity``).
public struct PreferencesStoreActivity: Sendable, Hashable {
    /// The change feeds open now on the store in this process: every
    /// ``PreferencesStore/changes()``, ``PreferencesStore/changes(_:)``,
    /// ``PreferencesStore/changes(since:)`` and
    /// ``PreferencesStore/problemChanges()`` not yet ended.
    public var feedSubscribers: Int
    /// How many writes lost their compare-and-swap to another writer and
    /// were tried again, since the store was first opened in this process.
    /// A backend with a lock (a file) rarely loses one; on etcd, where
    /// every writer competes this way, it counts the contention.
    public var retriedWriteConflicts: Int

    /// Activity with the given counts.
    public init(feedSubscribers: Int, retriedWriteConflicts: Int) {
        self.feedSubscribers = feedSubscribers
        self.retriedWriteConflicts = retriedWriteConflicts
    }
}

extension PreferencesStore {
    /// What the store's handles in this process are doing now: open change
    /// feeds and retried write conflicts. Handles on one document share
    /// their state (S9), so each reports the same. Read from memory.
    ///
    /// ```swift
    /// let activity = store.activity
    /// print("\(activity.feedSubscribers) feeds, \(activity.retriedWriteConflicts) retries")
    /// ```
    public var activity: PreferencesStoreActivity {
        core.state.withLock {
            PreferencesStoreActivity(
                feedSubscribers: $0.watching.subscribers.count,
                retriedWriteConflicts: $0.retriedWriteConflicts)
        }
    }

    /// Every key that is secret in this process now: those declared secret
    /// by this process (`PreferenceKey(…, secret: true)`,
    /// ``treatAsSecret(_:)``) and those the store lists as secret (A3,
    /// <doc:ChangingSettingsSafely>). Read from memory; ``isSecret(_:)``
    /// answers for one key.
    public var secretKeys: Set<String> {
        core.state.withLock { $0.secrets.union($0.current.snapshot.secretKeys) }
    }
}
