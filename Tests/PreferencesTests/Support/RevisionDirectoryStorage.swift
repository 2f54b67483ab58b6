import Foundation
import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A backend written only to show that one outside this package keeps the
/// storage contract with nothing but the public protocol: every revision is
/// a file of its own in a directory, named by its number.
///
/// - `<n>` holds the document of revision n; `<n>.empty` says revision n
///   holds nothing (a set-aside). The highest number is the current state.
/// - A write of revision n + 1 links a complete temporary file to the name
///   `<n+1>`; `link` refuses a name that exists, so of two writers that
///   read n exactly one creates n + 1 — the compare-and-swap. No lock; the
///   store retries a lost write.
/// - A corrupt document is hard-linked to `corrupt-<stamp>` (never
///   replacing an earlier one) before `<n+1>.empty` is created, so its bytes
///   are never without a name.
/// - The watch polls the directory every 5 ms.
///
/// `breaksCompareAndSwap` makes a write ignore the revision it was given —
/// the mutant the contract must catch.
final class RevisionDirectoryStorage: PreferencesStorage {
    let directory: URL
    let breaksCompareAndSwap: Bool

    init(directory: URL, breaksCompareAndSwap: Bool = false) {
        self.directory = directory
        self.breaksCompareAndSwap = breaksCompareAndSwap
    }

    var location: String { directory.path }
    var tuning: StorageTuning { StorageTuning(maxWriteAttempts: 100) }
    var historyArchive: (any HistoryArchive)? { nil }
    var manifests: (any ManifestPublishing)? { nil }
    var replicas: (any ReplicaRegistry)? { nil }
    var privacy: (any StoragePrivacy)? { nil }

    /// The highest revision and whether it holds a document.
    private func latest() throws -> (number: Int, holdsDocument: Bool)? {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var best: (Int, Bool)?
        for name in names {
            let empty = name.hasSuffix(".empty")
            guard let number = Int(empty ? String(name.dropLast(6)) : name) else { continue }
            if number > best?.0 ?? 0 { best = (number, !empty) }
        }
        return best
    }

    private func revision(_ latest: (number: Int, holdsDocument: Bool)?) -> StorageRevision {
        guard let latest, latest.holdsDocument else { return .absent }
        return StorageRevision(String(latest.number))
    }

    func read() throws -> StoredContents {
        // A newer revision may land between listing and reading: list again.
        while true {
            let found = try latest()
            guard let found, found.holdsDocument else {
                return StoredContents(bytes: nil, revision: .absent)
            }
            let url = directory.appendingPathComponent(String(found.number))
            let bytes = try Array(Data(contentsOf: url))
            if try latest()?.number == found.number {
                return StoredContents(bytes: bytes, revision: revision(found))
            }
        }
    }

    func currentRevision() throws -> StorageRevision { revision(try latest()) }

    func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws -> StorageRevision? {
        let found = try latest()
        if !breaksCompareAndSwap && revision(found) != expected { return nil }
        let number = (found?.number ?? 0) + 1
        guard try create(String(number), bytes) else { return nil }
        return StorageRevision(String(number))
    }

    func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T { try body() }

    func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        guard let found = try latest(), found.holdsDocument,
            revision(found) == contents.revision
        else { return nil }
        let source = directory.appendingPathComponent(String(found.number)).path
        var place = "corrupt-\(stamp)"
        var attempt = 1
        while link(source, directory.appendingPathComponent(place).path) != 0 {
            guard errno == EEXIST else { throw failure("set aside", source) }
            attempt += 1
            place = "corrupt-\(stamp)-\(attempt)"
        }
        guard try create("\(found.number + 1).empty", []) else {
            // Someone wrote first: theirs stands, and the bytes keep their name.
            unlink(directory.appendingPathComponent(place).path)
            return nil
        }
        return directory.appendingPathComponent(place).path
    }

    func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        PollingWatch(self, onEvent)
    }

    /// Creates `name` holding `bytes`, durably, unless it exists (false).
    /// The bytes go to a temporary file first, which is then linked to
    /// `name` (`link` fails if the name exists): a reader never sees the
    /// name before its bytes are whole.
    private func create(_ name: String, _ bytes: [UInt8]) throws -> Bool {
        let temporary = directory.appendingPathComponent("tmp-\(UUID().uuidString)").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("create", temporary) }
        defer { unlink(temporary) }
        let complete = writeAll(descriptor, bytes) && fsync(descriptor) == 0
        close(descriptor)
        guard complete else { throw failure("write", temporary) }
        let path = directory.appendingPathComponent(name).path
        if link(temporary, path) != 0 {
            if errno == EEXIST { return false }
            throw failure("link", path)
        }
        return true
    }

    private func failure(_ operation: String, _ path: String) -> PreferencesError {
        .io(
            operation: operation, path: path, code: errno,
            message: String(cString: strerror(errno)))
    }
}

/// Writes all of `bytes` to `descriptor`.
private func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}

/// Reports a change whenever the revision differs from the last one seen.
/// (`@unchecked`: the timer is set up in `init` and then only cancelled.)
private final class PollingWatch: StorageWatch, @unchecked Sendable {
    private let queue = DispatchQueue(label: "revision-directory")
    private let timer: DispatchSourceTimer

    init(
        _ storage: RevisionDirectoryStorage,
        _ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void
    ) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        let last = LastSeen((try? storage.currentRevision()) ?? .absent)
        timer.setEventHandler {
            guard let now = try? storage.currentRevision(), last.replace(with: now) else { return }
            onEvent(.changed(nil))
        }
        timer.schedule(deadline: .now(), repeating: .milliseconds(5))
        timer.resume()
    }

    /// Cancels on the timer's queue, so no report is under way once it returns.
    func cancel() { queue.sync { timer.cancel() } }
}

/// The last revision a polling watch saw; only its timer's queue touches it.
private final class LastSeen: @unchecked Sendable {
    private var revision: StorageRevision
    init(_ revision: StorageRevision) { self.revision = revision }
    /// Records `new`; true when it differs from what was seen before.
    func replace(with new: StorageRevision) -> Bool {
        defer { revision = new }
        return new != revision
    }
}
