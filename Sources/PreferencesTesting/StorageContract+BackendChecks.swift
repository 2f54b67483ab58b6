import Preferences
import Testing

/// The promises a backend keeps on its own, checked by calling it directly.
extension StorageContract {
    static let backendChecks: [Check] = [
        Check("S12: an empty backend reads as absent", emptyBackendReadsAsAbsent),
        Check(
            "S12: a write is read back, with its revision, through another handle",
            writeIsReadBackThroughAnotherHandle),
        Check(
            "S3, S12: compare-and-swap refuses a stale revision and writes nothing",
            staleRevisionIsRefused),
        Check(
            "S13: every write moves the revision, even with identical bytes",
            everyWriteMovesTheRevision),
        Check(
            "S3: writers racing with compare-and-swap lose no increment",
            racingWritersLoseNothing),
        Check(
            "S8: a corrupt document is set aside, never destroyed",
            corruptDocumentIsSetAsideNotDestroyed),
        Check(
            "S8: setting aside a document that changed meanwhile changes nothing",
            setAsideOfAChangedDocumentChangesNothing),
        Check("S12: exclusive access runs its body and nests", exclusiveAccessNests),
        Check(
            "C3, C5: the watch reports another writer and stops when cancelled",
            watchReportsAnotherWriterAndStops),
        Check(
            "S11: a document over the backend's size limit is refused before it is sent",
            oversizedDocumentIsRefused),
    ]

    static func emptyBackendReadsAsAbsent(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let storage = subject.storage
        let contents = try await contract.call("read") { try storage.read() }
        #expect(contents.bytes == nil, "an empty backend read bytes")
        #expect(contents.revision == .absent, "an empty backend's revision is not .absent")
        let revision = try await contract.call("currentRevision") {
            try storage.currentRevision()
        }
        #expect(revision == .absent, "an empty backend's current revision is not .absent")
    }

    static func writeIsReadBackThroughAnotherHandle(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        let (storage, other) = (subject.storage, subject.otherHandle)
        let written = try await contract.call("write") {
            try storage.write(Array("one".utf8), ifRevision: .absent)
        }
        let revision = try #require(written, "a write to an empty backend comparing .absent lost")
        #expect(revision != .absent, "a write returned .absent")
        let contents = try await contract.call("read, other handle") { try other.read() }
        #expect(contents.bytes == Array("one".utf8), "another handle did not read the write")
        #expect(contents.revision == revision, "another handle read another revision")
        let current = try await contract.call("currentRevision, other handle") {
            try other.currentRevision()
        }
        #expect(current == revision, "currentRevision differs from the revision read")
    }

    static func staleRevisionIsRefused(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let (storage, other) = (subject.storage, subject.otherHandle)
        let first = try #require(
            try await contract.call("first write") {
                try storage.write(Array("one".utf8), ifRevision: .absent)
            }, "the first write lost its compare-and-swap")
        let second = try #require(
            try await contract.call("second write, other handle") {
                try other.write(Array("two".utf8), ifRevision: first)
            }, "a write comparing the current revision lost")
        #expect(second != first, "a write did not move the revision")
        let stale = try await contract.call("write comparing a stale revision") {
            try storage.write(Array("three".utf8), ifRevision: first)
        }
        #expect(stale == nil, "a write comparing a stale revision was accepted")
        let absent = try await contract.call("write comparing .absent over a document") {
            try storage.write(Array("four".utf8), ifRevision: .absent)
        }
        #expect(absent == nil, "a write comparing .absent replaced an existing document")
        let contents = try await contract.call("read") { try storage.read() }
        #expect(contents.bytes == Array("two".utf8), "a refused write changed the document")
        #expect(contents.revision == second, "a refused write moved the revision")
    }

    static func everyWriteMovesTheRevision(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let storage = subject.storage
        let revisions = try await contract.call("20 writes of the same bytes") {
            var revision = StorageRevision.absent
            var all = [revision]
            for _ in 0..<20 {
                guard let next = try storage.write(Array("same".utf8), ifRevision: revision)
                else { break }
                revision = next
                all.append(next)
            }
            return all
        }
        #expect(revisions.count == 21, "a write comparing the revision just returned lost")
        #expect(Set(revisions).count == revisions.count, "a revision repeated: \(revisions)")
    }

    /// Two writers, one per handle, each incrementing a counter 50 times by
    /// read, add one, compare-and-swap — retrying whenever they lose.
    static func racingWritersLoseNothing(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let rounds = 50
        let handles = [subject.storage, subject.otherHandle]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for handle in handles {
                group.addTask {
                    try await contract.call("\(rounds) increments by compare-and-swap") {
                        for _ in 0..<rounds {
                            var landed = false
                            for _ in 0..<1000 where !landed {
                                let contents = try handle.read()
                                let count = contents.bytes.map { Int(decoding: $0) } ?? 0
                                let next = Array(String(count + 1).utf8)
                                landed =
                                    try handle.withExclusiveAccess {
                                        try handle.write(next, ifRevision: contents.revision)
                                    } != nil
                            }
                            if !landed {
                                throw ContractFailure(
                                    "an increment lost 1,000 compare-and-swaps in a row")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try await contract.call("read") { try subject.storage.read() }
        let count = final.bytes.map { Int(decoding: $0) }
        #expect(
            count == rounds * handles.count,
            "two writers racing \(rounds) increments each ended at \(count.map(String.init) ?? "nothing")"
        )
    }

    static func corruptDocumentIsSetAsideNotDestroyed(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        let storage = subject.storage
        let stamp = "20260101T000000Z"
        var places: [String] = []
        for garbage in ["garbage one", "garbage two"] {
            _ = try await contract.call("write") {
                try storage.write(Array(garbage.utf8), ifRevision: storage.read().revision)
            }
            let place = try await contract.call("setAsideCorrupt") {
                try storage.setAsideCorrupt(storage.read(), stamp: stamp)
            }
            let moved = try #require(place, "setAsideCorrupt of the current document moved nothing")
            #expect(moved.contains(stamp), "the set-aside place \(moved) does not name its stamp")
            let empty = try await contract.call("read after the set-aside") { try storage.read() }
            #expect(empty.bytes == nil, "the backend still holds a document after its set-aside")
            #expect(empty.revision == .absent, "a set-aside backend's revision is not .absent")
            let kept = try await contract.call("read the set-aside bytes") {
                try subject.readSetAside(moved)
            }
            #expect(kept == Array(garbage.utf8), "the bytes set aside at \(moved) are not kept")
            places.append(moved)
        }
        #expect(places[0] != places[1], "a second set-aside in one second reused \(places[0])")
        let firstPlace = places[0]
        let first = try await contract.call("read the first set-aside bytes") {
            try subject.readSetAside(firstPlace)
        }
        #expect(first == Array("garbage one".utf8), "a second set-aside replaced the first's bytes")
    }

    static func setAsideOfAChangedDocumentChangesNothing(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        let (storage, other) = (subject.storage, subject.otherHandle)
        let found = try await contract.call("write and read a corrupt document") {
            _ = try storage.write(Array("garbage".utf8), ifRevision: .absent)
            return try storage.read()
        }
        let repaired = try await contract.call("a repair by another handle") {
            try other.write(Array("repaired".utf8), ifRevision: found.revision)
        }
        #expect(repaired != nil, "a write comparing the current revision lost")
        let place = try await contract.call("setAsideCorrupt of the older contents") {
            try storage.setAsideCorrupt(found, stamp: "20260101T000000Z")
        }
        #expect(place == nil, "a document that changed since it was read was set aside")
        let now = try await contract.call("read") { try storage.read() }
        #expect(now.bytes == Array("repaired".utf8), "a refused set-aside changed the document")
    }

    static func exclusiveAccessNests(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let storage = subject.storage
        let written = try await contract.call("nested exclusive access") {
            try storage.withExclusiveAccess {
                try storage.withExclusiveAccess {
                    try storage.write(Array("x".utf8), ifRevision: .absent) != nil
                }
            }
        }
        #expect(written, "a write inside nested exclusive access lost")
    }

    static func watchReportsAnotherWriterAndStops(
        _ subject: Subject, _ contract: StorageContract
    ) async throws {
        let (storage, other) = (subject.storage, subject.otherHandle)
        guard subject.watches else {
            let watch = try await contract.call("watch") { try storage.watch { _ in } }
            #expect(watch == nil, "a subject that does not watch returned a watch")
            return
        }
        let watched = EventLog()
        let watch = try #require(
            try await contract.call("watch") { try storage.watch(watched.record) },
            "the backend returned no watch")
        _ = try await contract.call("write, other handle") {
            try other.write(Array("external".utf8), ifRevision: other.read().revision)
        }
        // A watch may report spuriously (etcd's first event is its initial
        // read): wait for an event after which the other writer's bytes show.
        try await contract.waitFor("a watch event showing another handle's write") {
            var seen = 0
            while true {
                seen = try await watched.next(after: seen)
                let bytes = try await contract.call("read") { try storage.read() }.bytes
                if bytes == Array("external".utf8) { return }
            }
        }
        watch.cancel()
        let heard = watched.count
        // Many more watches, each cancelled right after a burst of writes,
        // while their events are still on the way: no call reaches a
        // handler once its cancel() has returned.
        let late = try await callsAfterCancel(subject, contract)
        // Nor does a cancelled watch report a later write. A second watch
        // on the same backend shows when that write has been reported, by
        // when any call still on its way at a cancel has landed.
        let witness = EventLog()
        let witnessWatch = try #require(
            try await contract.call("witness watch") { try storage.watch(witness.record) },
            "the backend returned no second watch")
        defer { witnessWatch.cancel() }
        let before = witness.count
        _ = try await contract.call("write after cancel, other handle") {
            try other.write(Array("after cancel".utf8), ifRevision: other.read().revision)
        }
        try await contract.waitFor("the witness watch to report the write after cancel") {
            var seen = before
            while true {
                seen = try await witness.next(after: seen)
                let bytes = try await contract.call("read") { try storage.read() }.bytes
                if bytes == Array("after cancel".utf8) { return }
            }
        }
        #expect(
            late.value == 0,
            "handlers were called \(late.value) times after their watch's cancel() had returned")
        #expect(
            watched.count == heard,
            "a cancelled watch reported \(watched.count - heard) events after cancel() returned")
    }

    /// Starts ``cancelRounds`` watches one after another; each, once it has
    /// reported a write, sees a burst of writes and is cancelled at once, on
    /// the thread that wrote, while events of the burst may still be on
    /// their way. The handlers take a while (``slowHandler``), so that events
    /// queue up behind them. Returns the count of handler calls that began
    /// after their watch's cancel() had returned (it may still grow while
    /// late calls land: read it last).
    static func callsAfterCancel(_ subject: Subject, _ contract: StorageContract)
        async throws -> Locked<Int>
    {
        let (storage, other) = (subject.storage, subject.otherHandle)
        let late = Locked(0)
        for round in 0..<cancelRounds {
            let events = EventLog()
            let returned = Locked(false)
            let watch = try #require(
                try await contract.call("watch \(round)") {
                    try storage.watch { event in
                        if returned.value { late.withLock { $0 += 1 } }
                        events.record(event)
                        sleepThread(seconds: slowHandler)
                    }
                }, "the backend returned no watch")
            // Cancelled below; this covers a check that fails before (a
            // second cancel() changes nothing).
            defer { watch.cancel() }
            // Two writes, each reported: a watch that reports a first write
            // with what it read at its start (etcd's) reports the second as
            // it comes.
            for step in 0..<2 {
                let marker = Array("round \(round), step \(step)".utf8)
                let before = events.count
                _ = try await contract.call("write, other handle") {
                    try other.write(marker, ifRevision: other.read().revision)
                }
                try await contract.waitFor("watch \(round) to report another handle's write") {
                    var seen = before
                    while true {
                        seen = try await events.next(after: seen)
                        let bytes = try await contract.call("read") { try storage.read() }.bytes
                        if bytes == marker { return }
                    }
                }
            }
            try await contract.call("a burst of writes, then cancel()") {
                for index in 0..<5 {
                    _ = try other.write(
                        Array("round \(round), write \(index)".utf8),
                        ifRevision: other.read().revision)
                }
                watch.cancel()
                returned.withLock { $0 = true }
            }
        }
        return late
    }

    /// How many watches ``callsAfterCancel(_:_:)`` cancels.
    static let cancelRounds = 20
    /// How long each call of its handlers takes, in seconds.
    static let slowHandler = 0.01

    static func oversizedDocumentIsRefused(_ subject: Subject, _ contract: StorageContract)
        async throws
    {
        let storage = subject.storage
        guard let limit = storage.tuning.maxDocumentSize else { return }
        let outcome = try await contract.call("write over maxDocumentSize") {
            Result {
                try storage.write([UInt8](repeating: 0x20, count: limit + 1), ifRevision: .absent)
            }
        }
        switch outcome {
        case .failure(PreferencesError.limitExceeded):
            break
        case .failure(let error):
            Issue.record("a document over maxDocumentSize failed with \(error), not .limitExceeded")
        case .success(let revision):
            Issue.record(
                "a document over maxDocumentSize was written (\(revision.map(\.token) ?? "lost"))")
        }
        let contents = try await contract.call("read") { try storage.read() }
        #expect(contents.bytes == nil, "a refused oversized write left a document")
    }
}

/// Counts a watch's events and lets a check await the next one.
final class EventLog: Sendable {
    private let state = Locked<(count: Int, waiters: [(Int, CheckedContinuation<Int, Never>)])>(
        (0, []))

    var count: Int { state.value.count }

    var record: @Sendable (StorageWatchEvent) -> Void {
        { [self] _ in
            let ready = state.withLock { state -> [CheckedContinuation<Int, Never>] in
                state.count += 1
                let count = state.count
                let ready = state.waiters.filter { $0.0 < count }.map(\.1)
                state.waiters.removeAll { $0.0 < count }
                return ready
            }
            let count = self.count
            for waiter in ready { waiter.resume(returning: count) }
        }
    }

    /// Waits until more than `seen` events were recorded; returns how many.
    func next(after seen: Int) async throws -> Int {
        try Task.checkCancellation()
        return await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Int? in
                if state.count > seen { return state.count }
                state.waiters.append((seen, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}

extension Int {
    /// The decimal number in `bytes`, or 0 when they hold none.
    fileprivate init(decoding bytes: [UInt8]) {
        self = Int(String(decoding: bytes, as: UTF8.self)) ?? 0
    }
}

/// A check that could not go on, with what went wrong.
struct ContractFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
