import Foundation
import Synchronization

/// The file backend: one JSON file, replaced atomically and durably, shared
/// safely between processes (SPEC S2, S3, S10).
///
/// - Every write goes to a new temporary file in the same directory (random
///   name, `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`, mode 0600), is fsynced,
///   renamed over the target, and the directory is fsynced. The target is
///   never truncated or written in place, so a crash leaves the old or the
///   new file, both complete.
/// - Writers hold an exclusive `flock` on the sibling `<file>.lock`, which
///   also keeps a write generation that every writer bumps; a revision is
///   that generation plus the file's identity (device, inode, size, times),
///   so an external editor's save is noticed as well.
/// - A symlinked file is followed: the target is replaced and the link stays.
/// - A missing file reads as nothing stored; a missing parent directory is
///   created, mode 0700, on the first write.
/// - A replaced file keeps the old file's permission bits, and when running
///   as root, its owner.
public final class FileStorage: PreferencesStorage {
    /// The path as given (made absolute).
    public let path: String
    let maxFileSize: Int
    /// While the lock is held: its descriptor and the target it protects
    /// (resolved once, so one locked section works on one file).
    private let heldLock = Mutex<(descriptor: Int32, target: String)?>(nil)
    private let sweptTemporaryFiles = Mutex(false)

    /// A backend for the file at `url`.
    ///
    /// - Parameters:
    ///   - url: the file; a relative path is taken from the current directory.
    ///   - maxFileSize: files larger than this read as corrupt.
    public init(fileURL url: URL, maxFileSize: Int = PreferencesLimits().maxFileSize) {
        var path = url.path
        if !path.hasPrefix("/") { path = Platform.currentDirectory() + "/" + path }
        self.path = path
        self.maxFileSize = maxFileSize
    }

    /// The file's path.
    public var location: String { path }

    /// `file:` and the canonical path of the target (symlinks followed), so every
    /// spelling of one file shares one store state.
    public var identity: String? {
        let target = targetPath
        let directory = Platform.parentDirectory(of: target)
        let canonical = Platform.realPath(directory) ?? directory
        return "file:" + canonical + "/" + Platform.lastComponent(of: target)
    }

    /// The file actually read and replaced: `path` with symlinks followed.
    var targetPath: String {
        heldLock.withLock { $0?.target } ?? Platform.resolveSymlinks(path)
    }

    /// The lock file beside the target.
    var lockPath: String { targetPath + ".lock" }

    private func revision(generation: UInt64, stamp: Platform.FileStamp?) -> StorageRevision {
        guard let stamp else { return .absent }
        return StorageRevision(
            "g\(generation)-\(stamp.device)-\(stamp.inode)-\(stamp.size)-\(stamp.modifiedSeconds).\(stamp.modifiedNanoseconds)-\(stamp.changedSeconds).\(stamp.changedNanoseconds)"
        )
    }

    private func generation() -> UInt64 {
        if let held = heldLock.withLock({ $0 }) {
            return Platform.readGeneration(descriptor: held.descriptor)
        }
        return Platform.readGeneration(path: lockPath)
    }

    /// Reads the target file; nil bytes when it does not exist.
    public func read() throws -> StoredContents {
        let target = targetPath
        let generation = generation()
        guard let (bytes, stamp) = try Platform.readFile(target, limit: maxFileSize) else {
            return StoredContents(bytes: nil, revision: .absent)
        }
        return StoredContents(
            bytes: bytes, revision: revision(generation: generation, stamp: stamp))
    }

    /// The write generation and the target's identity, from `stat`.
    public func currentRevision() throws -> StorageRevision {
        let target = targetPath
        let generation = generation()
        guard let stamp = try Platform.fileStamp(target) else { return .absent }
        if stamp.isDirectory {
            throw Platform.ioError("read", target, code: EISDIR)
        }
        return revision(generation: generation, stamp: stamp)
    }

    /// Holds an exclusive `flock` on `<file>.lock` while `body` runs (re-entrant).
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        if heldLock.withLock({ $0 }) != nil { return try body() }
        let target = Platform.resolveSymlinks(path)
        let lockPath = target + ".lock"
        try Platform.makeDirectories(Platform.parentDirectory(of: lockPath))
        let descriptor = try Platform.lockExclusively(lockPath)
        heldLock.withLock { $0 = (descriptor, target) }
        defer {
            heldLock.withLock { $0 = nil }
            Platform.unlock(descriptor)
        }
        return try body()
    }

    /// Replaces the file atomically and durably if its revision is still `expected`.
    public func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        try withExclusiveAccess {
            guard try currentRevision() == expected else { return nil }
            let target = targetPath
            let directory = Platform.parentDirectory(of: target)
            removeOrphanedTemporaryFiles(of: target)
            let existing = try Platform.fileStamp(target)
            let temporary = try Platform.writeTemporaryFile(
                in: directory, prefix: Platform.lastComponent(of: target), bytes: bytes,
                mode: existing?.mode ?? 0o600, owner: existing.map { ($0.uid, $0.gid) })
            do {
                try Platform.rename(temporary, target)
            } catch {
                Platform.unlinkQuietly(temporary)
                throw error
            }
            try Platform.syncDirectory(directory)
            let generation = try bumpGeneration()
            return revision(generation: generation, stamp: try Platform.fileStamp(target))
        }
    }

    /// Removes temporary files left by writers that died between creating
    /// and renaming them (`.<name>.<random>.tmp`). Called holding the lock,
    /// when no other writer can be using one; once per backend object.
    private func removeOrphanedTemporaryFiles(of target: String) {
        guard
            sweptTemporaryFiles.withLock({ swept in
                defer { swept = true }; return !swept
            })
        else {
            return
        }
        let directory = Platform.parentDirectory(of: target)
        let prefix = "." + Platform.lastComponent(of: target) + "."
        guard let entries = try? Platform.listDirectory(directory) else { return }
        for (name, kind) in entries
        where kind == .regular && name.hasPrefix(prefix) && name.hasSuffix(".tmp")
            && name.count == prefix.count + 12 + 4
        {
            Platform.unlinkQuietly(directory + "/" + name)
        }
    }

    private func bumpGeneration() throws -> UInt64 {
        guard let descriptor = heldLock.withLock({ $0?.descriptor }) else { return 0 }
        let next = Platform.readGeneration(descriptor: descriptor) &+ 1
        try Platform.writeGeneration(next, descriptor: descriptor, path: lockPath)
        return next
    }

    /// Renames the file to `<name>.corrupt-<stamp>` (with a counter if taken).
    public func setAsideCorrupt(stamp: String) throws -> String {
        try withExclusiveAccess {
            let target = targetPath
            // Never rename over an earlier backup: that would destroy its bytes.
            var place = target + ".corrupt-" + stamp
            var attempt = 1
            while try Platform.fileStamp(place) != nil {
                attempt += 1
                place = target + ".corrupt-" + stamp + "-\(attempt)"
            }
            try Platform.rename(target, place)
            try Platform.syncDirectory(Platform.parentDirectory(of: target))
            _ = try bumpGeneration()
            return place
        }
    }

    /// Watches the file's directory (inotify, kqueue, or polling).
    public func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
        try FileWatcher.start(path: path, onChange: onChange)
    }
}
