import Foundation
import PreferencesTestSupport
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Real faults under a store running in another process (<doc:Reliability>;
/// S8, <doc:StoreGuarantees>): each gives `PreferencesError.io` with the fault's errno, leaves the file's bytes
/// and the store's values as they were, and the same store writes again once
/// the fault is removed.
@Suite(.scaledTimeLimit(minutes: 10)) struct ReliabilityFaultTests {
    enum Fault: String, CaseIterable, CustomTestStringConvertible {
        case diskFull = "disk full"
        case readOnlyDirectory = "read-only directory"
        case unreadableFile = "permission denied on the file"
        case lockedOutOfLockFile = "permission denied on the lock file"
        case directoryInPlaceOfFile = "the file replaced by a directory"

        var testDescription: String { rawValue }

        /// The errno the write must fail with.
        var code: Int32 {
            switch self {
            case .diskFull: ENOSPC
            case .readOnlyDirectory, .unreadableFile, .lockedOutOfLockFile: EACCES
            case .directoryInPlaceOfFile: EISDIR
            }
        }

        /// Root bypasses permission bits, so these run their store as another user.
        var runsAsAnotherUser: Bool {
            [.readOnlyDirectory, .unreadableFile, .lockedOutOfLockFile].contains(self)
        }

        /// Whether this fault can be made here; when it cannot, the test is a
        /// skip with ``unavailableReason`` in the report (and `.ci/run` fails).
        var isAvailable: Bool {
            switch self {
            case .diskFull: canMountTmpfs
            case .readOnlyDirectory, .unreadableFile, .lockedOutOfLockFile: canSwitchUser
            case .directoryInPlaceOfFile: true
            }
        }

        /// Why this fault cannot be made here.
        var unavailableReason: Comment {
            switch self {
            case .diskFull: "disk full needs a small tmpfs: \(TmpfsMount.unavailableReason)"
            default: "\(rawValue) needs root and /usr/bin/setpriv to run the store as another user"
            }
        }

        func inject(_ directory: URL, _ file: URL) async throws {
            switch self {
            case .diskFull:
                // Another program fills the file system to the last block; the
                // count is bounded (more blocks than the mount holds), so dd
                // ends with "No space left on device" and never runs on.
                let status = try await runTool(
                    "/usr/bin/dd",
                    [
                        "if=/dev/zero", "of=\(directory.path)/filler", "bs=4096",
                        "count=\(ReliabilityFaultTests.tmpfsBytes / 4096 + 1)",
                    ])
                #expect(status != 0, "dd did not fill the file system")
            case .readOnlyDirectory:
                try #require(try await runTool("/usr/bin/chmod", ["0555", directory.path]) == 0)
            case .unreadableFile:
                try #require(try await runTool("/usr/bin/chmod", ["0000", file.path]) == 0)
            case .lockedOutOfLockFile:
                try #require(
                    try await runTool("/usr/bin/chown", ["0:0", file.path + ".lock"]) == 0)
                try #require(
                    try await runTool("/usr/bin/chmod", ["0600", file.path + ".lock"]) == 0)
            case .directoryInPlaceOfFile:
                try #require(
                    try await runTool("/usr/bin/mv", [file.path, file.path + ".aside"]) == 0)
                try #require(try await runTool("/usr/bin/mkdir", [file.path]) == 0)
            }
        }

        func remove(_ directory: URL, _ file: URL) async throws {
            switch self {
            case .diskFull:
                try FileManager.default.removeItem(atPath: directory.path + "/filler")
            case .readOnlyDirectory:
                try #require(try await runTool("/usr/bin/chmod", ["0755", directory.path]) == 0)
            case .unreadableFile:
                try #require(try await runTool("/usr/bin/chmod", ["0600", file.path]) == 0)
            case .lockedOutOfLockFile:
                try #require(
                    try await runTool(
                        "/usr/bin/chown", ["\(nobodyUser):\(nobodyUser)", file.path + ".lock"]) == 0
                )
            case .directoryInPlaceOfFile:
                try #require(try await runTool("/usr/bin/rmdir", [file.path]) == 0)
                try #require(
                    try await runTool("/usr/bin/mv", [file.path + ".aside", file.path]) == 0)
            }
        }

        /// Where the old bytes are while the fault is in place.
        func oldBytesLocation(_ file: URL) -> URL {
            self == .directoryInPlaceOfFile ? URL(fileURLWithPath: file.path + ".aside") : file
        }
    }

    /// The size of the tmpfs the disk-full fault fills.
    static let tmpfsBytes = 256 * 1024

    @Test(.enabled(if: Fault.diskFull.isAvailable, Fault.diskFull.unavailableReason))
    func diskFull() async throws {
        try await check(.diskFull)
    }

    @Test(
        .enabled(
            if: Fault.readOnlyDirectory.isAvailable, Fault.readOnlyDirectory.unavailableReason))
    func readOnlyDirectory() async throws {
        try await check(.readOnlyDirectory)
    }

    @Test(.enabled(if: Fault.unreadableFile.isAvailable, Fault.unreadableFile.unavailableReason))
    func permissionDeniedOnTheFile() async throws {
        try await check(.unreadableFile)
    }

    @Test(
        .enabled(
            if: Fault.lockedOutOfLockFile.isAvailable,
            Fault.lockedOutOfLockFile.unavailableReason))
    func permissionDeniedOnTheLockFile() async throws {
        try await check(.lockedOutOfLockFile)
    }

    @Test(
        .enabled(
            if: Fault.directoryInPlaceOfFile.isAvailable,
            Fault.directoryInPlaceOfFile.unavailableReason))
    func directoryAtThePath() async throws {
        try await check(.directoryInPlaceOfFile)
    }

    /// The fault under a store in another process: the documented error,
    /// the old data intact, and the same store writing again once it clears.
    func check(_ fault: Fault) async throws {
        let temporary = try TemporaryDirectory()
        // The disk-full fault needs its own small file system: never the real disk.
        var mount: TmpfsMount? = nil
        if fault == .diskFull {
            let made: TmpfsMount = try #require(
                TmpfsMount(size: "\(Self.tmpfsBytes / 1024)k"), "a tmpfs could not be mounted")
            mount = made
        }
        let directory = mount?.url ?? temporary.url.appendingPathComponent("store")
        if mount == nil {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: false)
        }
        if fault.runsAsAnotherUser {
            _ = try await runTool("/usr/bin/chmod", ["0755", temporary.path])
            giveAway(directory.path, to: nobodyUser)
        }
        let file = directory.appendingPathComponent("prefs.json")
        let store = try await ServedStore(file, user: fault.runsAsAnotherUser ? nobodyUser : nil)
        #expect(try await store.send("set kept 1") == "ok")
        #expect(try await store.send("set other 2") == "ok")
        let before = try Data(contentsOf: file)

        try await fault.inject(directory, file)
        let answer = try await store.send("set kept 99")
        #expect(ServedStore.ioCode(answer) == fault.code, "\(answer)")
        #expect(try Data(contentsOf: fault.oldBytesLocation(file)) == before)
        #expect(try await store.send("get kept") == "value 1")

        try await fault.remove(directory, file)
        #expect(try Data(contentsOf: file) == before)
        #expect(try await store.send("set kept 100") == "ok")
        #expect(try storedInteger("kept", in: file) == 100)
        #expect(try storedInteger("other", in: file) == 2)
        let recovered = try storedInteger("kept", in: file) == 100
        try await store.stop()
        Reliability.report(
            "fault \(fault.rawValue): \(answer.prefix(160)); old data intact; "
                + (recovered
                    ? "the same store wrote again after the fault cleared" : "DID NOT RECOVER"))
    }
}
