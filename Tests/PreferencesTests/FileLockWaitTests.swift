import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waiting for another process's lock ends (S3, S15, <doc:StoreGuarantees>): a child holds
/// `<file>.lock` and is stopped with SIGSTOP, as a debugger or a terminal's
/// Ctrl-Z would leave it.
@Suite(.scaledTimeLimit(minutes: 10)) struct FileLockWaitTests {
    /// Whether an error is the lock timeout, naming the lock file and, where
    /// the system can tell (Linux), the process holding it.
    static func isLockTimeout(_ error: any Error, lock: String, holder: Int32) -> Bool {
        guard case PreferencesError.io(let operation, let path, let code, let message) = error
        else { return false }
        #if os(Linux)
            let namesHolder = message.contains("process \(holder)")
        #else
            let namesHolder = true
        #endif
        return operation == "lock" && path == lock && code == ETIMEDOUT && namesHolder
    }

    @Test func aWriteWaitsForTheLockThenTimesOutNamingTheLockAndItsHolder() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let holder = try await LockHolder(file)
        holder.stop()
        let storage = FileStorage(fileURL: file, lockTimeout: .milliseconds(400))
        let started = ContinuousClock.now
        let outcome = await FileIntegrity.onThread(within: 30) {
            Result { try storage.write(Array("x".utf8), ifRevision: .absent) }
        }
        let waited = ContinuousClock.now - started
        let result = try #require(outcome, "the write was still waiting for the lock after 30 s")
        #expect(throws: PreferencesError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(
                Self.isLockTimeout(error, lock: file.path + ".lock", holder: holder.pid),
                "\(error)")
        }
        // It waited (the lock really excludes the other process), then gave up.
        #expect(waited >= .milliseconds(400))
        #expect(!FileIntegrity.exists(file.path))
    }

    @Test func aStoreCallNeverHangsOnAStoppedLockHolder() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        var limits = PreferencesLimits()
        limits.lockTimeout = .milliseconds(300)
        let store = try await PreferencesStore(fileURL: file, limits: limits)
        try await store.set(PreferenceKeys.counter, 1)
        let holder = try await LockHolder(file)
        holder.stop()
        let set = await FileIntegrity.outcome(within: 30) {
            try await store.set(PreferenceKeys.counter, 2)
        }
        let setResult = try #require(set, "set was still waiting after 30 s")
        if case .failure(let error) = setResult {
            #expect(
                Self.isLockTimeout(error, lock: file.path + ".lock", holder: holder.pid),
                "\(error)")
        } else {
            Issue.record("set succeeded while another process held the lock")
        }
        let reload = await FileIntegrity.outcome(within: 30) { try await store.reload() }
        #expect(reload != nil, "reload was still waiting after 30 s")
        #expect(store[PreferenceKeys.counter] == 1)
        #expect(try storedInteger("counter", in: file) == 1)
    }

    @Test func prefsExitsFiveAfterTenSecondsNamingTheLockAndItsHolder() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let holder = try await LockHolder(file)
        holder.stop()
        let started = ContinuousClock.now
        let result = try await runChild(
            "prefs", ["--file", file.path, "set", "planted", "1"])
        let waited = ContinuousClock.now - started
        #expect(result.status == 5, "\(result.standardError)")
        #expect(result.standardError.contains("\(file.path).lock"), "\(result.standardError)")
        #if os(Linux)
            #expect(
                result.standardError.contains("process \(holder.pid)"), "\(result.standardError)")
        #endif
        // The default wait (S15, <doc:StoreGuarantees>) is ten seconds.
        #expect(waited >= .seconds(10))
    }
}

/// The lock's holder comes from `/proc/locks`, which the kernel hands out
/// about a page per read, whatever its size: a busy system lists more locks
/// than one read returns, and the holder may be on any page.
@Suite(.scaledTimeLimit(minutes: 10)) struct ProcFileReadingTests {
    static let listing = "/proc/kallsyms"
    static let isLong =
        (try? FileManager.default.attributesOfItem(atPath: listing)) != nil
        && (FileHandle(forReadingAtPath: listing).flatMap { try? $0.read(upToCount: 8192) }?
            .count ?? 0) > 4096

    @Test(.enabled(if: isLong, "needs a /proc file longer than a page (/proc/kallsyms)"))
    func aProcFileIsReadToItsEndNotToItsFirstPage() throws {
        let whole = try #require(try FileHandle(forReadingAtPath: Self.listing)?.readToEnd())
        let read = try #require(try Platform.readFile(Self.listing, limit: 64 << 20))
        #expect(whole.count > 8192)
        #expect(read.bytes.count == whole.count)
    }
}
