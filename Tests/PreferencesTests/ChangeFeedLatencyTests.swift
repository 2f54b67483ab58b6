import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Delivery latency, printed, never asserted (P5, <doc:Performance>). Opt in with
/// `PREFS_MEASURE=1 swift test --filter ChangeFeedLatency`.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["PREFS_MEASURE"] == "1",
        "opt-in measurement: PREFS_MEASURE=1 swift test --filter ChangeFeedLatency"),
    .scaledTimeLimit(minutes: 10))
struct ChangeFeedLatencyTests {
    static let rounds = 200

    /// An external writer (a separate backend object, as another process
    /// uses: lock, temporary file, fsync, rename, directory fsync) to the
    /// moment the subscriber's loop receives the value.
    @Test(arguments: [FileWatcher.Mechanism.native, .polling])
    func externalWriteToDelivery(mechanism: FileWatcher.Mechanism) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let file = FileStorage(fileURL: url)
        let storage = HookedStorage(
            file,
            watchWith: { try FileWatcher.start(path: file.path, using: mechanism, onChange: $0) })
        let store = try await PreferencesStore(storage: storage)
        let writer = FileStorage(fileURL: url)
        let deliveries = DeliveryClock()
        let consumer = Task {
            for await value in store.changes(.counter) { deliveries.record(value) }
        }
        defer { consumer.cancel() }
        _ = await deliveries.wait(for: 0)

        var total: [Duration] = []
        var afterWrite: [Duration] = []
        for value in 1...Self.rounds {
            let bytes = try StoreDocument(values: ["counter": .int(Int64(value))])
                .encode(file: url.path, limits: PreferencesLimits())
            let started = ContinuousClock.now
            let revision = try writer.currentRevision()
            #expect(try writer.write(bytes, ifRevision: revision) != nil)
            let written = ContinuousClock.now
            let delivered = await deliveries.wait(for: value)
            total.append(delivered - started)
            afterWrite.append(max(.zero, delivered - written))
        }
        print(
            "external write → delivery (\(mechanism), \(Self.rounds) writes): "
                + "from write start \(summary(total)); after the write returned \(summary(afterWrite))"
        )
    }

    @Test func inProcessSetToDelivery() async throws {
        let directory = try TemporaryDirectory()
        let store = try await PreferencesStore(fileURL: directory.file("prefs.json"))
        let deliveries = DeliveryClock()
        let consumer = Task {
            for await value in store.changes(.counter) { deliveries.record(value) }
        }
        defer { consumer.cancel() }
        _ = await deliveries.wait(for: 0)
        var total: [Duration] = []
        var afterReturn: [Duration] = []
        for value in 1...Self.rounds {
            let started = ContinuousClock.now
            try await store.set(.counter, value)
            let returned = ContinuousClock.now
            let delivered = await deliveries.wait(for: value)
            total.append(delivered - started)
            afterReturn.append(max(.zero, delivered - returned))
        }
        print(
            "in-process set → delivery (\(Self.rounds) sets): from the call \(summary(total)); "
                + "after set returned \(summary(afterReturn))")
    }

    private func summary(_ samples: [Duration]) -> String {
        let sorted = samples.sorted()
        func ms(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
            return String(format: "%.3f ms", value)
        }
        return "p50 \(ms(sorted[sorted.count / 2])), max \(ms(sorted[sorted.count - 1]))"
    }
}

/// When each value reached the consumer's loop.
private final class DeliveryClock: Sendable {
    private let state = Locked<
        (
            times: [Int: ContinuousClock.Instant],
            waiter: (Int, CheckedContinuation<ContinuousClock.Instant, Never>)?
        )
    >(([:], nil))

    func record(_ value: Int) {
        let now = ContinuousClock.now
        let waiter = state.withLock {
            state -> CheckedContinuation<ContinuousClock.Instant, Never>? in
            state.times[value] = now
            guard let (wanted, continuation) = state.waiter, wanted == value else { return nil }
            state.waiter = nil
            return continuation
        }
        waiter?.resume(returning: now)
    }

    func wait(for value: Int) async -> ContinuousClock.Instant {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> ContinuousClock.Instant? in
                if let time = state.times[value] { return time }
                state.waiter = (value, continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
