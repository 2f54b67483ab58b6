import Synchronization

extension PreferencesStore {
    /// The key's value now, then each new distinct value (SPEC §8).
    ///
    /// Writes by this process are delivered before the write returns; writes
    /// by other processes (another instance, `prefs set`, an editor) are
    /// noticed by watching the file's directory (while the store is open with
    /// live reads, else while at least one feed is active). A
    /// slow consumer skips intermediate values but always ends on the latest.
    /// Ending the loop or cancelling its task ends the subscription.
    ///
    /// ```swift
    /// for await zoom in store.changes(.mapZoom) {
    ///     map.setZoom(zoom)
    /// }
    /// ```
    public func changes<Value>(_ key: PreferenceKey<Value>) -> AsyncStream<Value> {
        let name = key.name
        return makeFeed(distinctBy: { snapshot in snapshot.values[name] }) { snapshot, _ in
            snapshot[key]
        }
    }

    /// The whole state now, then each new distinct state.
    ///
    /// The same rules as ``changes(_:)`` apply. An external write that
    /// leaves the file corrupt yields nothing and does not end the feed: the
    /// store keeps its last good state and lists the problem in
    /// ``problems``; the next valid write is delivered as usual. Deleting
    /// the file yields a snapshot with no stored values (every key's default).
    ///
    /// ```swift
    /// for await snapshot in store.changes() {
    ///     render(snapshot[.darkMode], snapshot[.language])
    /// }
    /// ```
    public func changes() -> AsyncStream<PreferencesSnapshot> {
        makeFeed(distinctBy: nil as (@Sendable (PreferencesSnapshot) -> Int)?) { snapshot, _ in
            snapshot
        }
    }

    /// A feed of `transform(snapshot, identity)` for each new state, skipping
    /// states whose `distinctBy` value is unchanged (every new state counts
    /// when nil). `transform` receives that value, so a feed whose elements
    /// are their own identity computes them once.
    func makeFeed<Element: Sendable, Identity: Equatable & Sendable>(
        distinctBy identity: (@Sendable (PreferencesSnapshot) -> Identity)?,
        transform: @escaping @Sendable (PreferencesSnapshot, Identity?) -> Element
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let last = Mutex<(generation: UInt64, identity: Identity?)?>(nil)
        let core = self.core
        let id = core.subscribe { snapshot, generation in
            let current = identity?(snapshot)
            // Yield under the lock so deliveries from two threads stay in order.
            last.withLock { last in
                if let previous = last {
                    if generation <= previous.generation { return }
                    if identity != nil && previous.identity == current {
                        last = (generation, current)
                        return
                    }
                }
                last = (generation, current)
                continuation.yield(transform(snapshot, current))
            }
        }
        continuation.onTermination = { _ in core.unsubscribe(id) }
        return stream
    }

    /// The current ``problems``, then the list again each time it changes —
    /// for logging a corrupt file another program wrote (C6), a stored value
    /// of the wrong type, or a migration's notes.
    ///
    /// While it runs, the store watches the file as a change feed does, so
    /// problems in other programs' writes are noticed without reading.
    ///
    /// ```swift
    /// for await problems in store.problemChanges() {
    ///     for problem in problems { log.warning("\(problem)") }
    /// }
    /// ```
    public func problemChanges() -> AsyncStream<[PreferencesProblem]> {
        let (stream, continuation) = AsyncStream<[PreferencesProblem]>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let core = self.core
        let last = Mutex<(problems: [PreferencesProblem], sequence: UInt64)?>(nil)
        let watcher = core.watchProblems { problems, sequence in
            // Yield under the lock so deliveries from two threads stay in order.
            last.withLock { last in
                if let last, sequence < last.sequence || last.problems == problems { return }
                last = (problems, sequence)
                continuation.yield(problems)
            }
        }
        // An ordinary subscriber keeps the file watched while this runs.
        let subscriber = core.subscribe { _, _ in }
        continuation.onTermination = { _ in
            core.stopWatchingProblems(watcher)
            core.unsubscribe(subscriber)
        }
        return stream
    }
}
