import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Real faults under a store running in another process (SPEC §10, S8): each
/// gives `PreferencesError.io` with the fault's errno, leaves the file's bytes
/// and the store's values as they were, and the same store writes again once
/// the fault is removed.
@Suite struct ReliabilityFaultTests {
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

        /// Why this fault cannot be made here, or nil when it can.
        var unavailableReason: String? {
            if self == .diskFull && !canMountTmpfs { return "a small tmpfs cannot be mounted here" }
            if runsAsAnotherUser && !canSwitchUser {
                return "needs root and setpriv to run as another user"
            }
            return nil
        }

        func inject(_ directory: URL, _ file: URL) throws {
            switch self {
            case .diskFull:
                // Another program fills the file system to the last block.
                _ = try runTool(
                    "/usr/bin/dd", ["if=/dev/zero", "of=\(directory.path)/filler", "bs=4096"])
            case .readOnlyDirectory:
                try #require(try runTool("/usr/bin/chmod", ["0555", directory.path]) == 0)
            case .unreadableFile:
                try #require(try runTool("/usr/bin/chmod", ["0000", file.path]) == 0)
            case .lockedOutOfLockFile:
                try #require(try runTool("/usr/bin/chown", ["0:0", file.path + ".lock"]) == 0)
                try #require(try runTool("/usr/bin/chmod", ["0600", file.path + ".lock"]) == 0)
            case .directoryInPlaceOfFile:
                try #require(try runTool("/usr/bin/mv", [file.path, file.path + ".aside"]) == 0)
                try #require(try runTool("/usr/bin/mkdir", [file.path]) == 0)
            }
        }

        func remove(_ directory: URL, _ file: URL) throws {
            switch self {
            case .diskFull:
                try FileManager.default.removeItem(atPath: directory.path + "/filler")
            case .readOnlyDirectory:
                try #require(try runTool("/usr/bin/chmod", ["0755", directory.path]) == 0)
            case .unreadableFile:
                try #require(try runTool("/usr/bin/chmod", ["0600", file.path]) == 0)
            case .lockedOutOfLockFile:
                try #require(
                    try runTool(
                        "/usr/bin/chown", ["\(nobodyUser):\(nobodyUser)", file.path + ".lock"]) == 0
                )
            case .directoryInPlaceOfFile:
                try #require(try runTool("/usr/bin/rmdir", [file.path]) == 0)
                try #require(try runTool("/usr/bin/mv", [file.path + ".aside", file.path]) == 0)
            }
        }

        /// Where the old bytes are while the fault is in place.
        func oldBytesLocation(_ file: URL) -> URL {
            self == .directoryInPlaceOfFile ? URL(fileURLWithPath: file.path + ".aside") : file
        }
    }

    @Test(arguments: Fault.allCases)
    func faultGivesTheDocumentedErrorKeepsTheDataAndClears(_ fault: Fault) throws {
        if let reason = fault.unavailableReason {
            Reliability.report("fault \(fault.rawValue): skipped, \(reason)")
            return
        }
        let temporary = try TemporaryDirectory()
        let mount = fault == .diskFull ? TmpfsMount(size: "256k") : nil
        let directory = mount?.url ?? temporary.url.appendingPathComponent("store")
        if mount == nil {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: false)
        }
        if fault.runsAsAnotherUser {
            _ = try runTool("/usr/bin/chmod", ["0755", temporary.path])
            giveAway(directory.path, to: nobodyUser)
        }
        let file = directory.appendingPathComponent("prefs.json")
        let store = try ServedStore(file, user: fault.runsAsAnotherUser ? nobodyUser : nil)
        #expect(store.send("set kept 1") == "ok")
        #expect(store.send("set other 2") == "ok")
        let before = try Data(contentsOf: file)

        try fault.inject(directory, file)
        let answer = store.send("set kept 99")
        #expect(ServedStore.ioCode(answer) == fault.code, "\(answer)")
        #expect(try Data(contentsOf: fault.oldBytesLocation(file)) == before)
        #expect(store.send("get kept") == "value 1")

        try fault.remove(directory, file)
        #expect(try Data(contentsOf: file) == before)
        #expect(store.send("set kept 100") == "ok")
        #expect(try storedInteger("kept", in: file) == 100)
        #expect(try storedInteger("other", in: file) == 2)
        let recovered = try storedInteger("kept", in: file) == 100
        Reliability.report(
            "fault \(fault.rawValue): \(answer.prefix(160)); old data intact; "
                + (recovered
                    ? "the same store wrote again after the fault cleared" : "DID NOT RECOVER"))
    }
}
