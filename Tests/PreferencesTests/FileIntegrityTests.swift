import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Synchronization
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file backend's revisions, durability and exclusivity at their edges
/// (S2, S3, S9, S13, <doc:StoreGuarantees>).
@Suite(.scaledTimeLimit(minutes: 10)) struct FileIntegrityTests {
    static let label = PreferenceKey<String>("label", default: "")
    static let number = PreferenceKey<Int>("number", default: 0)

    /// Another program saves `file` in place, as an editor does: the same
    /// inode, the same size, without the lock. Returns whether the file's
    /// stamp (size, modification and change times) came out unchanged.
    @discardableResult
    static func saveInPlace(_ file: URL, replacing old: String, with new: String) throws -> Bool {
        #expect(old.utf8.count == new.utf8.count)
        let before = try #require(try Platform.fileStamp(file.path))
        let text = try #require(contents(file))
        #expect(text.contains(old))
        let bytes = Array(text.replacingOccurrences(of: old, with: new).utf8)
        let descriptor = open(file.path, O_WRONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(pwrite(descriptor, bytes, bytes.count, 0) == bytes.count)
        let after = try #require(try Platform.fileStamp(file.path))
        return before == after
    }

    // MARK: S13

    @Test(
        .enabled(
            if: RamfsMount.isAvailable,
            "needs root to mount a ramfs, a file system with coarse timestamps (Linux)"))
    func anInPlaceSaveWithinOneTimestampTickIsNoticedByReload() async throws {
        let mount = try #require(RamfsMount())
        let file = mount.url.appendingPathComponent("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        var unchangedStamps = 0
        // At least 20 rounds, and more until five saves kept the stamp (a
        // busy machine can let a tick pass between the store's write and the
        // save).
        for attempt in 1...400 where attempt <= 20 || unchangedStamps < 5 {
            try await store.set(Self.label, "saved-\(attempt)-by-store")
            if try Self.saveInPlace(file, replacing: "-by-store", with: "-by-editr") {
                unchangedStamps += 1
            }
            try await store.reload()
            #expect(
                store[Self.label] == "saved-\(attempt)-by-editr",
                "attempt \(attempt): the editor's save was not noticed")
        }
        // The case under test happened: saves that left the stamp as it was.
        #expect(unchangedStamps > 0)
    }

    @Test(
        .enabled(
            if: RamfsMount.isAvailable,
            "needs root to mount a ramfs, a file system with coarse timestamps (Linux)"))
    func anInPlaceSaveDuringAnEditIsNotOverwrittenByIt() async throws {
        let mount = try #require(RamfsMount())
        let file = mount.url.appendingPathComponent("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        for attempt in 1...20 {
            try await store.set(Self.label, "saved-\(attempt)-by-store")
            let calls = Atomic<Int>(0)
            // The save lands after the store's read and before its write.
            try await store.edit { prefs in
                if calls.add(1, ordering: .relaxed).newValue == 1 {
                    _ = try? Self.saveInPlace(file, replacing: "-by-store", with: "-by-editr")
                }
                prefs[Self.number] = attempt
            }
            let text = contents(file) ?? ""
            #expect(
                text.contains("saved-\(attempt)-by-editr"),
                "attempt \(attempt): the edit overwrote the editor's save: \(text)")
            #expect(try storedInteger("number", in: file) == Int64(attempt))
            #expect(store[Self.label] == "saved-\(attempt)-by-editr")
        }
    }

    /// S13's rule for a stamp that cannot be trusted: one not older than
    /// the file clock by a tick (a nanosecond; two seconds on a file system
    /// that keeps whole seconds) could be left as it is by a later change
    /// of the same size, so the file's bytes are compared. Needs no root,
    /// unlike the ramfs tests that show the same through real saves.
    @Test func aStampWithinOneTickOfTheFileClockIsNotTrusted() {
        let now: Int64 = 1_765_000_000_123_456_789
        func stamp(at nanoseconds: Int64, wholeSeconds: Bool = false) -> Platform.FileStamp {
            let seconds = nanoseconds / 1_000_000_000
            let fraction = wholeSeconds ? 0 : nanoseconds % 1_000_000_000
            return Platform.FileStamp(
                device: 1, inode: 2, size: 3, modifiedSeconds: seconds,
                modifiedNanoseconds: fraction, changedSeconds: seconds,
                changedNanoseconds: fraction, isRegularFile: true, isDirectory: false,
                mode: 0o600, uid: 0, gid: 0)
        }
        #expect(stamp(at: now).isRacy(at: now), "stamped in the clock's current tick")
        #expect(stamp(at: now + 5).isRacy(at: now), "stamped after the clock was read")
        #expect(!stamp(at: now - 1).isRacy(at: now), "a tick older than the clock")
        #expect(
            stamp(at: now - 1_000_000_000, wholeSeconds: true).isRacy(at: now),
            "whole seconds, within two seconds of the clock")
        #expect(
            !stamp(at: now - 3_000_000_000, wholeSeconds: true).isRacy(at: now),
            "whole seconds, three seconds older than the clock")
    }

    @Test func aWriteReportsTheRevisionOfTheBytesItWrote() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.json")
        let storage = FileStorage(fileURL: url)
        let other = FileStorage(fileURL: url)
        let revision = try #require(try storage.write(Array("first".utf8), ifRevision: .absent))
        #expect(try other.currentRevision() == revision)
        #expect(try other.read().revision == revision)
        // The same stamp with other bytes is another revision.
        _ = try Self.saveInPlace(url, replacing: "first", with: "frost")
        #expect(try other.currentRevision() != revision)
        #expect(try storage.write(Array("second".utf8), ifRevision: revision) == nil)
        #expect(contents(url) == "frost")
    }

    // MARK: Durability

    /// S2: the target is never truncated or written in place. A reader that
    /// opened the file before a write still reads the old bytes whole, and
    /// the name then holds a new file (another inode) with the new bytes.
    @Test func aWriteReplacesTheFileAndNeverRewritesItInPlace() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.set(Self.number, 1)
        let before = try #require(FileManager.default.contents(atPath: file.path))
        let inode = try identity(file).inode
        let reader = try FileHandle(forReadingFrom: file)
        defer { try? reader.close() }
        try await store.set(Self.number, 2)
        #expect(try reader.readToEnd() == before, "the file open before the write was changed")
        #expect(try identity(file).inode != inode, "the write reused the old file's inode")
        #expect(try storedInteger("number", in: file) == 2)
    }

    @Test func aDirectoryFsyncThatFailedIsRedoneBeforeARetriedSetSucceeds() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.set(Self.number, 1)
        Platform.injectFault(.directorySync, at: directory.path, code: EIO)
        defer { Platform.clearFault(.directorySync, at: directory.path) }
        await #expect {
            try await store.set(Self.number, 2)
        } throws: { error in
            guard case PreferencesError.io(let operation, let path, let code, _) = error else {
                return false
            }
            return operation == "fsync directory" && path == directory.path && code == EIO
        }
        // The file was renamed into place, so memory now shows 2 and the retry
        // changes nothing; it still must not report success while the
        // directory that holds the rename is not durable.
        #expect(store[Self.number] == 2)
        await #expect(throws: PreferencesError.self) { try await store.set(Self.number, 2) }
        Platform.clearFault(.directorySync, at: directory.path)
        try await store.set(Self.number, 2)
        #expect(try storedInteger("number", in: file) == 2)
    }

    /// The byte after the write generation in `<file>.lock`: 1 while a
    /// rename into the directory may not be durable yet.
    static func directorySyncDue(_ file: URL) throws -> UInt8? {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file.path + ".lock")))
        return bytes.count > 8 ? bytes[8] : nil
    }

    @Test func anotherProcessRetryingTheSameSetFsyncsTheDirectoryFirst() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.set(Self.number, 1)
        Platform.injectFault(.directorySync, at: directory.path, code: EIO)
        await #expect(throws: PreferencesError.self) { try await store.set(Self.number, 2) }
        Platform.clearFault(.directorySync, at: directory.path)
        #expect(try Self.directorySyncDue(file) == 1)
        // An operator retries with `prefs`: the value is already there (S5),
        // but the directory is fsynced before it reports success.
        let retry = try await runChild(
            "prefs", ["--file", file.path, "set", "number", "2"])
        #expect(retry.status == 0, "\(retry.standardError)")
        #expect(try Self.directorySyncDue(file) == 0)
        #expect(try storedInteger("number", in: file) == 2)
    }

    @Test func aNewStoreDirectoryIsMadeDurableInItsParent() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("new/prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        Platform.injectFault(.directorySync, at: directory.path, code: EIO)
        defer { Platform.clearFault(.directorySync, at: directory.path) }
        await #expect {
            try await store.set(Self.number, 1)
        } throws: { error in
            guard case PreferencesError.io(_, let path, _, _) = error else { return false }
            return path == directory.path
        }
        // The directory exists now; its entry in the parent is still not durable.
        await #expect(throws: PreferencesError.self) { try await store.set(Self.number, 1) }
        Platform.clearFault(.directorySync, at: directory.path)
        try await store.set(Self.number, 1)
        #expect(try storedInteger("number", in: file) == 1)
    }

    /// The store's directory made by the first locked call that writes no
    /// value, the publication of a key manifest: the manifests are in it, so
    /// its entry in the parent is fsynced then, and the publication fails
    /// when that fsync does.
    @Test func aDirectoryMadeToPublishAManifestIsMadeDurableInItsParent() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("new/prefs.json")
        let store = try await PreferencesStore(fileURL: file, liveReads: false)
        let manifest = try PreferencesManifest(
            jsonText: #"{"format": 1, "keys": {"number": {"type": "int", "default": 0}}}"#)
        Platform.injectFault(.directorySync, at: directory.path, code: EIO)
        defer { Platform.clearFault(.directorySync, at: directory.path) }
        await store.declare(manifest)
        let refused = store.problems.map(\.message).filter {
            $0.hasPrefix("the key manifest could not be published") && $0.contains(directory.path)
        }
        #expect(refused.count == 1, "\(store.problems.map(\.message))")
        Platform.clearFault(.directorySync, at: directory.path)
        await store.declare(manifest)
        #expect(store.problems.isEmpty, "\(store.problems.map(\.message))")
        #expect(FileManager.default.fileExists(atPath: directory.file("new/prefs.keys.json").path))
    }

    /// Another process made the store's directory and died before its entry
    /// in the parent was durable; the first file written there makes it so.
    @Test func theFirstFileInADirectoryMadeElsewhereMakesTheDirectoryDurable() async throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("new"), withIntermediateDirectories: false)
        let file = directory.file("new/prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        Platform.injectFault(.directorySync, at: directory.path, code: EIO)
        defer { Platform.clearFault(.directorySync, at: directory.path) }
        await #expect {
            try await store.set(Self.number, 1)
        } throws: { error in
            guard case PreferencesError.io(_, let path, _, _) = error else { return false }
            return path == directory.path
        }
        #expect(!FileManager.default.fileExists(atPath: file.path), "nothing was put in place")
        Platform.clearFault(.directorySync, at: directory.path)
        try await store.set(Self.number, 1)
        #expect(try storedInteger("number", in: file) == 1)
    }

    @Test func aFailedBookkeepingStepIsNeverReportedAsAFailedWriteThatHappened() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: file)
        try await store.set(Self.number, 1)
        let lock = file.path + ".lock"
        Platform.injectFault(.generationWrite, at: lock, code: EIO)
        defer { Platform.clearFault(.generationWrite, at: lock) }
        // The bookkeeping comes before the rename, so its failure fails the
        // set with nothing replaced: never a failure reported for a write
        // that happened.
        await #expect {
            try await store.set(Self.number, 2)
        } throws: { error in
            guard case PreferencesError.io(_, let path, let code, _) = error else { return false }
            return code == EIO && path == lock
        }
        #expect(try storedInteger("number", in: file) == 1, "a failed set replaced the file")
        #expect(store[Self.number] == 1, "memory shows a set that failed")
        Platform.clearFault(.generationWrite, at: lock)
        try await store.set(Self.number, 2)
        #expect(try storedInteger("number", in: file) == 2)
    }

    // MARK: Exclusive access

    @Test func aWriteFromAnotherThreadWaitsForTheLockTheStoreHolds() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.file("prefs.json")
        let storage = FileStorage(fileURL: file, lockTimeout: .milliseconds(300))
        let store = try await PreferencesStore(storage: storage)
        try await store.set(Self.number, 1)
        let outcome = Locked<String>("not run")
        let calls = Atomic<Int>(0)
        try await store.edit { prefs in
            if calls.add(1, ordering: .relaxed).newValue == 1 {
                // The store's queue holds the lock now; another thread writes
                // through the public `storage`.
                let done = DispatchSemaphore(value: 0)
                Thread {
                    do {
                        let revision = try storage.currentRevision()
                        let written = try storage.write(
                            Array("{\"format\":1,\"values\":{}}\n".utf8), ifRevision: revision)
                        outcome.withLock { $0 = written == nil ? "refused" : "wrote" }
                    } catch {
                        outcome.withLock { $0 = "\(error)" }
                    }
                    done.signal()
                }.start()
                if done.wait(timeout: .now() + TestTime.scaled(seconds: 30)) == .timedOut {
                    outcome.withLock { $0 = "still waiting after 30 s" }
                }
            }
            prefs[Self.number] = 2
        }
        let result = outcome.withLock { $0 }
        #expect(result.contains("cannot lock \(file.path).lock"), "the other thread: \(result)")
        #expect(result.contains("process \(getpid())"), "the other thread: \(result)")
        #expect(try storedInteger("number", in: file) == 2)
    }

    // MARK: Smaller items

    @Test func orphanedTemporaryFilesAreSweptAgainDuringALongLife() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = FileStorage(
            fileURL: url, maxFileSize: 1 << 20, lockTimeout: .seconds(10),
            orphanSweepInterval: .zero)
        var revision = try #require(try storage.write(Array("one".utf8), ifRevision: .absent))
        for round in 1...2 {
            // A writer killed between creating its temporary file and renaming it.
            let orphan = directory.file(".prefs.json.orphan\(round)abcde.tmp")
            try write("half", to: orphan)
            revision = try #require(try storage.write(Array("two".utf8), ifRevision: revision))
            #expect(!FileIntegrity.exists(orphan.path), "round \(round): the orphan stayed")
        }
    }

    @Test func anArchiveRewriteKilledHalfWayLeavesNoTemporaryFileOnceTheStoreWrites() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let storage = FileStorage(
            fileURL: url, maxFileSize: 1 << 20, lockTimeout: .seconds(10),
            orphanSweepInterval: .zero)
        let revision = try #require(try storage.write(Array("one".utf8), ifRevision: .absent))
        // A trim of the archive killed between creating its temporary file
        // and renaming it; beside it, another store's, which stays.
        let orphan = directory.file(".prefs.json.history.orphan1abcde.tmp")
        let others = directory.file(".other.json.history.orphan1abcde.tmp")
        try write("half", to: orphan)
        try write("half", to: others)
        _ = try #require(try storage.write(Array("two".utf8), ifRevision: revision))
        #expect(!FileIntegrity.exists(orphan.path), "the archive's orphan stayed")
        #expect(FileIntegrity.exists(others.path), "another store's temporary file was removed")
    }

    @Test func twoSpellingsOfADirectoryNotYetCreatedShareOneState() async throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            at: directory.file("real"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("link").path, withDestinationPath: "real")
        let first = try await PreferencesStore(fileURL: directory.file("real/new/prefs.json"))
        let second = try await PreferencesStore(fileURL: directory.file("link/new/prefs.json"))
        try await first.set(Self.number, 5)
        #expect(second[Self.number] == 5)
    }

    /// Spellings of a file in an existing directory — through a linked
    /// directory, with `.` and `..` — name one store, and another name does not.
    @Test func spellingsOfAFileInAnExistingDirectoryShareOneState() async throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            at: directory.file("real"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: directory.file("link").path, withDestinationPath: "real")
        let spellings = [
            "real/prefs.json", "link/prefs.json", "real/./prefs.json", "link/../real/prefs.json",
        ]
        let identities = Set(
            spellings.map {
                FileStorage(fileURL: URL(fileURLWithPath: directory.file($0).path)).identity
            })
        #expect(identities.count == 1)
        let other = FileStorage(fileURL: directory.file("real/other.json")).identity
        #expect(!identities.contains(other))
        let first = try await PreferencesStore(fileURL: directory.file(spellings[0]))
        let second = try await PreferencesStore(fileURL: directory.file(spellings[3]))
        try await first.set(Self.number, 7)
        #expect(second[Self.number] == 7)
    }
}
