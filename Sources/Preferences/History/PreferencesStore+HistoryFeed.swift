/// What ``PreferencesStore/changes(since:)`` delivers.
public enum HistoryEvent: Sendable, Equatable {
    /// A committed change, in the order of sequence numbers.
    case change(HistoryEntry)
    /// The changes after `after` and before `resumesAt` are not in the
    /// history kept (they are older than its oldest entry, or were made
    /// while no program kept history). A consumer resynchronises from the
    /// current snapshot; the feed goes on at `resumesAt`.
    case gap(after: Int64, resumesAt: Int64)
}

/// A feed that resumes (H5, <doc:HistoryAndUndo>).
extension PreferencesStore {
    /// Every change after `sequence`, in order: first those the history
    /// holds, then each new one as it is committed, by this process or any
    /// other. A consumer that remembers the last sequence it handled and
    /// passes it here after a restart neither misses nor repeats a change;
    /// when the history no longer holds some of them, the feed says so
    /// with ``HistoryEvent/gap(after:resumesAt:)`` before going on.
    ///
    /// ```swift
    /// for await event in store.changes(since: checkpoint) {
    ///     switch event {
    ///     case .change(let entry):
    ///         apply(entry)
    ///         checkpoint = entry.sequence
    ///     case .gap:
    ///         resynchronise(from: store.snapshot)
    ///     }
    /// }
    /// ```
    ///
    /// Unlike ``changes()``, which may skip intermediate states, this feed
    /// delivers every change; a consumer that falls behind catches up from
    /// the history. Ending the loop or cancelling its task ends it.
    public func changes(since sequence: Int64) -> AsyncStream<HistoryEvent> {
        if handle.isClosed { return .finished }
        let (stream, continuation) = AsyncStream<HistoryEvent>.makeStream(
            bufferingPolicy: .unbounded)
        // The newest sequence the store has seen, as a wake-up for the
        // reader below; deliveries may come from several threads.
        let (latest, signal) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let newest = Locked<Int64>(-1)
        let core = self.core
        let id = core.subscribe { snapshot, _ in
            let wake = newest.withLock { newest -> Bool in
                guard snapshot.sequence > newest else { return false }
                newest = snapshot.sequence
                return true
            }
            if wake { signal.yield(newest.withLock { $0 }) }
        }
        let reader = Task {
            var delivered = sequence
            for await upTo in latest where upTo > delivered {
                for event in await Self.events(core, after: delivered, upTo: upTo) {
                    if Task.isCancelled { return }
                    continuation.yield(event)
                    switch event {
                    case .change(let entry): delivered = entry.sequence
                    case .gap(_, let resumesAt): delivered = resumesAt - 1
                    }
                }
            }
        }
        track(continuation) {
            core.unsubscribe(id)
            signal.finish()
            reader.cancel()
        }
        return stream
    }

    /// The events for the changes after `delivered` up to `upTo`: from the
    /// entries the current document carries when they reach back far
    /// enough, else from the whole history kept.
    static func events(_ core: StoreCore, after delivered: Int64, upTo: Int64) async
        -> [HistoryEvent]
    {
        var entries = core.snapshot.document.history.entries
        if entries.first.map({ $0.sequence > delivered + 1 }) ?? true,
            core.storage.historyArchive != nil,
            let kept = try? await core.queue.run({ try core.keptHistory() })
        {
            entries = kept.entries
        }
        var events: [HistoryEvent] = []
        var last = delivered
        for entry in entries where entry.sequence > delivered && entry.sequence <= upTo {
            if entry.sequence > last + 1 {
                events.append(.gap(after: last, resumesAt: entry.sequence))
            }
            events.append(.change(entry))
            last = entry.sequence
        }
        if last < upTo { events.append(.gap(after: last, resumesAt: upTo + 1)) }
        return events
    }
}
