extension PreferencesStore {
    /// The key's value now, then each new distinct value (<doc:ObservingChanges>).
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
    ///
    /// Values are compared as reads see them, after decoding: an integer
    /// `14` replaced by `14.0` in a `Double` key, or a stored value removed
    /// in favour of an equal default, is not a new value.
    public func changes<Value>(_ key: PreferenceKey<Value>) -> AsyncStream<Value> {
        if handle.isClosed { return .finished }
        let (stream, continuation) = AsyncStream<Value>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let last = Locked<(generation: UInt64, value: DecodedValue<Value>)?>(nil)
        let core = self.core
        let name = key.name
        let id = core.subscribe { snapshot, generation in
            let stored = snapshot.values[name]
            // Yield under the lock so deliveries from two threads stay in order.
            last.withLock { last in
                if let previous = last {
                    if generation <= previous.generation { return }
                    // The same stored value decodes the same: no decoding
                    // when another key changed.
                    if previous.value.stored == stored {
                        last = (generation, previous.value)
                        return
                    }
                }
                let current = DecodedValue(snapshot[key], stored: stored, of: key)
                defer { last = (generation, current) }
                if let previous = last, previous.value == current { return }
                continuation.yield(current.value)
            }
        }
        track(continuation) { core.unsubscribe(id) }
        return stream
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
        if handle.isClosed { return .finished }
        let (stream, continuation) = AsyncStream<Element>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let last = Locked<(generation: UInt64, identity: Identity?)?>(nil)
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
        track(continuation) { core.unsubscribe(id) }
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
        if handle.isClosed { return .finished }
        let (stream, continuation) = AsyncStream<[PreferencesProblem]>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let core = self.core
        let last = Locked<(problems: [PreferencesProblem], sequence: UInt64)?>(nil)
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
        track(continuation) {
            core.stopWatchingProblems(watcher)
            core.unsubscribe(subscriber)
        }
        return stream
    }
}

/// A key's decoded value, equal to another when both encode to the same
/// stored value: the canonical form compares what reads return for any
/// `Codable` type, equatable or not (`14` and `14.0` in a `Double` key are
/// one value; NaN equals NaN). A value that cannot be encoded equals nothing.
struct DecodedValue<Value: Codable & Sendable>: Equatable, Sendable {
    let value: Value
    /// The stored value it was decoded from (nil when absent).
    let stored: PreferenceValue?
    /// nil when encoding failed; `.some(nil)` for a value stored as absent.
    let canonical: PreferenceValue??

    init(_ value: Value, stored: PreferenceValue?, of key: PreferenceKey<Value>) {
        self.value = value
        self.stored = stored
        self.canonical = try? .some(key.encode(value))
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        guard let left = lhs.canonical, let right = rhs.canonical else { return false }
        return left == right
    }
}
