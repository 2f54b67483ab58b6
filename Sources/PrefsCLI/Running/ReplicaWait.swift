import Preferences

/// `--wait [TIMEOUT]` (F4 in
/// Sources/Preferences/Preferences.docc/RollingOutAChange.md): after a
/// write, waits until every live replica reports its sequence.
///
/// It waits on the backend's watch of the registrations (an event per
/// report, and when a registration is removed), and looks once a second
/// besides (a process that dies with a file registration leaves no event,
/// only a released lock); a backend without a watch is looked at every
/// 100 ms. A replica that goes away meanwhile is reported gone and
/// not waited for. The default timeout is 30 seconds.
struct ReplicaWait {
    static let defaultTimeout = Duration.seconds(30)

    /// `--wait`'s value: empty for the default; else a number with `ms`,
    /// `s` (the default unit) or `m`.
    static func timeout(_ text: String?) throws(CommandFailure) -> Duration? {
        guard let text else { return nil }
        if text.isEmpty { return defaultTimeout }
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60)]
        var number = Substring(text)
        var scale = 1.0
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(number), value >= 0, value.isFinite else {
            throw CommandFailure(
                .usage,
                "invalid --wait timeout '\(text)' (use a number of seconds, or 500ms, 2s, 1m)")
        }
        return .milliseconds(Int64(value * scale * 1000))
    }

    /// A command's `--wait [TIMEOUT]`.
    static func option<Owner: OptionOwner>() -> ValueOption<Owner> {
        ValueOption<Owner>(
            "--wait", "TIMEOUT",
            help:
                "Wait until every running replica has applied the change (default at most 30 s; 500ms, 2s, 1m).",
            optionalValue: true)
    }

    /// With a timeout (`--wait` given), waits for the change `store` made last.
    static func afterWrite(
        _ store: PreferencesStore, timeout: Duration?, output: ToolOutput
    ) async throws {
        guard let timeout else { return }
        try await ReplicaWait(storage: store.storage, output: output)
            .wait(for: store.snapshot.sequence, timeout: timeout)
    }

    let storage: any PreferencesStorage
    let output: ToolOutput

    /// Waits until every replica live now (and still live) has applied
    /// `sequence`; prints `applied on N/N replicas in T ms`, or fails with
    /// status 6 naming the replicas behind.
    func wait(for sequence: Int64, timeout: Duration) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + timeout
        let (events, continuation) = AsyncStream.makeStream(
            of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // Listed before the watch starts; the loop lists again at once.
        let waited = try storage.replicas?.list() ?? []
        let watch = try storage.replicas?.watch { continuation.yield() }
        defer {
            watch?.cancel()
            continuation.finish()
        }
        // Without a watch, look every 100 ms; with one, once a second all
        // the same, as a file registration's process can die without an
        // event (its lock goes; the file stays until someone looks).
        let pause: Duration = watch == nil ? .milliseconds(100) : .seconds(1)
        let poller = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: pause)
                continuation.yield()
            }
        }
        // Wakes the loop at the deadline.
        let timer = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            continuation.yield()
        }
        defer {
            poller.cancel()
            timer.cancel()
        }
        let progress = Terminal.standardErrorIsTerminal
        var iterator = events.makeAsyncIterator()
        var live = waited
        var shown = ""
        while true {
            live = try (storage.replicas?.list() ?? []).filter { replica in
                waited.contains { $0.host == replica.host && $0.pid == replica.pid }
            }
            let behind = live.filter { $0.applied < sequence }
            let line =
                "\r\(live.count - behind.count)/\(live.count) replicas have applied change \(sequence)"
            if progress && line != shown {
                output.standardError(line)
                shown = line
            }
            if behind.isEmpty { break }
            let now = clock.now
            if now >= deadline {
                if progress { output.standardError("\n") }
                reportGone(waited, live)
                let names = behind.map { "\($0.name) (\($0.program), at \($0.applied))" }
                throw CommandFailure(
                    .waitTimedOut,
                    "change \(sequence) not applied within \(Self.text(timeout)) by "
                        + names.joined(separator: ", "))
            }
            _ = await iterator.next()
        }
        if progress { output.standardError("\n") }
        reportGone(waited, live)
        let elapsed = clock.now - start
        let milliseconds =
            elapsed.components.seconds * 1000 + elapsed.components.attoseconds
            / 1_000_000_000_000_000
        output.print("applied on \(live.count)/\(live.count) replicas in \(milliseconds) ms")
    }

    private func reportGone(_ waited: [PreferencesReplica], _ live: [PreferencesReplica]) {
        for replica in waited where !live.contains(where: { $0.name == replica.name }) {
            output.print("replica \(replica.name) (\(replica.program)) has gone")
        }
    }

    static func text(_ duration: Duration) -> String {
        let milliseconds =
            duration.components.seconds * 1000 + duration.components.attoseconds
            / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
