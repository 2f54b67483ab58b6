import Foundation
import Preferences
import PreferencesTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one temporary directory of the tests and the storage contract,
/// named here too so that a test file needs only this module.
package typealias TemporaryDirectory = PreferencesTesting.TemporaryDirectory

/// A built product (`prefs`, `prefs-harness`) beside the test bundle.
package func productURL(_ name: String) -> URL {
    // Linux: the test binary itself. macOS: the loaded .xctest bundle, which
    // sits in the same build directory as the products.
    let start: URL
    if FileManager.default.fileExists(atPath: "/proc/self/exe") {
        start = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    } else if let bundle = Bundle.allBundles.first(where: { $0.bundlePath.hasSuffix(".xctest") }) {
        start = bundle.bundleURL
    } else {
        start = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    }
    var directory = start.deletingLastPathComponent()
    // On macOS the tests run inside a bundle: …/debug/X.xctest/Contents/MacOS/X.
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path),
        directory.path != "/"
    {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

/// Bytes of a file, or nil.
package func contents(_ url: URL) -> String? {
    (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
}

package func write(_ text: String, to url: URL) throws {
    try Data(text.utf8).write(to: url)
}

/// `stat` identity of a file: inode and modification time.
package func identity(_ url: URL) throws -> (inode: UInt64, modified: Int64) {
    let info = try #require(fileStatus(url.path), "no file at \(url.path)")
    #if canImport(Darwin)
        let modified = info.st_mtimespec
    #else
        let modified = info.st_mtim
    #endif
    return (UInt64(info.st_ino), Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec))
}

package func permissions(_ url: URL) throws -> UInt32 {
    UInt32(try #require(fileStatus(url.path), "no file at \(url.path)").st_mode) & 0o7777
}

/// Sends a signal to a process.
package func sendSignal(_ signal: Int32, to pid: Int32) {
    #if canImport(Glibc)
        _ = Glibc.kill(pid, signal)
    #else
        _ = Darwin.kill(pid, signal)
    #endif
}

/// A tmpfs mounted for one test (root on Linux only); unmounted at the end.
/// Suites that need a real read-only or full file system are disabled
/// (`.enabled(if: canMountTmpfs, …)`, with the reason) where it cannot be
/// mounted.
package final class TmpfsMount {
    package let directory: TemporaryDirectory
    private let options: String
    package var url: URL { directory.url }

    package init?(size: String = "1m") {
        guard let directory = try? TemporaryDirectory() else { return nil }
        self.directory = directory
        options = "size=\(size),mode=0700"
        guard FileSystemMount.mount("tmpfs", at: directory.path, options: options) else {
            return nil
        }
    }

    package func remount(readOnly: Bool) throws {
        let remounted = FileSystemMount.mount(
            "tmpfs", at: directory.path, options: options, remount: true, readOnly: readOnly)
        #expect(remounted, "remounting \(directory.path) \(readOnly ? "read-only" : "read-write")")
    }

    deinit { FileSystemMount.unmount(directory.path) }

    package static var unavailableReason: String {
        "needs root and permission to mount a tmpfs (Linux)"
    }
}

/// Mounts and unmounts with the system calls themselves, not `mount`
/// children: nothing to wait for, from a test's task or a `deinit`.
package enum FileSystemMount {
    /// Mounts a file system of `type` (tmpfs, ramfs) at `path`, or remounts
    /// it; false when that is not possible here (not root, not Linux).
    package static func mount(
        _ type: String, at path: String, options: String, remount: Bool = false,
        readOnly: Bool = false
    ) -> Bool {
        #if os(Linux)
            var flags: UInt = 0
            if remount { flags |= UInt(MS_REMOUNT) }
            if readOnly { flags |= UInt(MS_RDONLY) }
            return Glibc.mount(type, path, type, flags, options) == 0
        #else
            return false
        #endif
    }

    /// Detaches the file system at `path` (lazily, like `umount -l`).
    package static func unmount(_ path: String) {
        #if os(Linux)
            _ = umount2(path, Int32(MNT_DETACH))
        #endif
    }
}

/// Whether tmpfs mounts work here (checked once).
package let canMountTmpfs: Bool = {
    TmpfsMount(size: "64k") != nil
}()

/// The name of the user this process runs as.
package func effectiveUserName() -> String {
    guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "?" }
    return String(cString: name)
}

/// A store file's text without its change records (`modified`) and history
/// entries (`history`), whose times differ from run to run, as compact JSON
/// with sorted keys.
package func withoutChangeRecords(_ text: String?) -> String? {
    guard let text, let root = try? TestJSON.parse(text),
        case .object(var members) = root
    else { return text }
    members["modified"] = nil
    // History entries carry times too (and are checked on their own), and
    // each store names its history at random.
    members["history"] = nil
    members["history_id"] = nil
    return PreferenceValue.object(members).jsonText
}

/// Gives `path` to `user` (the fault harness runs its child as that user).
package func giveAway(_ path: String, to user: UInt32) {
    _ = chown(path, uid_t(user), gid_t(user))
}

/// `stat` (or, with `followingLinks: false`, `lstat`) of a path; nil when
/// there is nothing there.
package func fileStatus(_ path: String, followingLinks: Bool = true) -> stat? {
    var info = stat()
    let result = followingLinks ? stat(path, &info) : lstat(path, &info)
    return result == 0 ? info : nil
}
