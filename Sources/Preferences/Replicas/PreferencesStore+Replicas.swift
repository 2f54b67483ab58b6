/// This process as a replica of the store (F2, <doc:RollingOutAChange>).
extension PreferencesStore {
    /// Returns once this process is registered as a replica of the store,
    /// or found not to be (live reads are off, or the backend keeps no
    /// registrations), or once an attempt failed: a backend out of reach
    /// (an etcd cluster down) leaves the failure in ``problems`` while the
    /// store tries again, after pauses growing from 0.5 s to 5 s, for as
    /// long as a handle with live reads is open.
    ///
    /// A store opened with live reads registers its process on its own
    /// queue, after the open has returned, so that opening costs nothing
    /// more; a process that only reads a key and exits never registers. A
    /// service that announces it is ready (to a supervisor, or to an operator
    /// about to run `prefs set --wait`) can wait for this first.
    ///
    /// ```swift
    /// let store = try await PreferencesStore(suite: "myservice")
    /// await store.registeredAsReplica()
    /// notifyReady()
    /// ```
    public func registeredAsReplica() async {
        await core.replicaScheduled()
    }
}
