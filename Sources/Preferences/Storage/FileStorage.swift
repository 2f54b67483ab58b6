#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The file backend: one JSON file, replaced atomically and durably, shared
/// safely between processes and users (S2, S3, S10, S13–S15, S19, <doc:StoreGuarantees>).
///
/// - Every write goes to a new temporary file in the same directory (random
///   name, `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`, mode 0600), is fsynced
///   (`F_FULLFSYNC` on Darwin), renamed over the target, and the directory
///   is fsynced. The target is never truncated or written in place, so a
///   crash leaves the old or the new file, both complete.
/// - Durable means durable: a write succeeds only once the directory holding
///   it is fsynced. Before the rename, the lock file marks that fsync as
///   due, and the mark is cleared after it. When the fsync fails (or the
///   writer dies first), the write fails, and every later call that takes
///   the lock, in any process — even an edit that changes nothing, such as
///   a retried `set` or `prefs set` — fsyncs the directory first and fails
///   while it cannot. A directory the store creates is fsynced in its parent
///   before the next locked call in this process succeeds, and the first
///   write of the file into a directory (made by whatever process) fsyncs
///   every directory above it before anything is put in place. Bookkeeping (the
///   write generation and the mark) happens before the rename, so a write is
///   never reported failed after its file was put in place, except by the
///   directory's fsync.
/// - Writers hold an exclusive `flock` on the sibling `<file>.lock`. The
///   lock is held per call chain, not per object: another thread calling
///   this backend (``PreferencesStore/storage`` is public) waits for it
///   like another process does. A wait gives up after `lockTimeout` (10 s by
///   default, ``PreferencesLimits/lockTimeout``) with
///   ``PreferencesError/io(operation:path:code:message:)`` (`ETIMEDOUT`)
///   naming the lock file and, on Linux, the process holding it.
/// - Revisions never lie (S13). A revision is the write generation kept in
///   the lock file, the file's stamp (device, inode, size, modification and
///   change times) and a 64-bit hash of its bytes. A stamp is trusted to
///   mark the bytes only once it is older than the file system's clock
///   tick when it is looked at — as git treats "racily clean" files: until
///   then (right after a write, or after anyone else's save within the
///   tick), checking the revision reads and hashes the file. So a writer
///   that ignores the lock and keeps the size, inode and times (an editor
///   saving in place within one tick, `printf > file`) is still noticed.
///   A file system with whole-second times gets a two-second window. The
///   rule assumes the clock does not step back, and that a network file
///   system's server stamps with a clock close to this machine's. The stamp
///   recorded after a write comes from the written file's own descriptor.
/// - A symlinked file is followed: the target is replaced and the link
///   stays. Another user's link in another user's directory is never
///   followed, nor, in a directory that others can write (o+w or g+w), a
///   link of neither the caller nor the directory's owner (the kernel's
///   `protected_symlinks` rule, applied by the store, S19); such a link
///   fails every call with `.io` (`EACCES`) naming the link and its owner,
///   before anything is read or created. The lock file, the history archive
///   and temporary files are never followed (`O_NOFOLLOW`).
/// - A missing file reads as nothing stored; a missing parent directory is
///   created, mode 0700, on the first write — except the system scope's
///   directory, which is never created (<doc:ServiceSettings>).
/// - Ownership (S14): a replaced file keeps the old file's permission bits.
///   Running as root, everything created — the file, `<file>.lock`,
///   directories, a corrupt file's replacement — belongs to the file's owner,
///   else to the owner of the nearest existing directory, so `sudo prefs
///   set` never locks a service out of its own store.
/// - Temporary files left by writers that died between creating and renaming
///   them are removed while a write holds the lock, at most once a minute.
public final class FileStorage: PreferencesStorage, StoragePrivacy {
    /// The path as given (made absolute).
    public let path: String
    let maxFileSize: Int
    /// How long ``withExclusiveAccess(_:)`` waits for another holder of the lock.
    public let lockTimeout: Duration
    let orphanSweepInterval: Duration
    /// Set for a store whose directory the store must not create (the
    /// system scope's, <doc:ServiceSettings>): what to tell the caller
    /// when the directory is missing.
    let missingDirectoryAdvice: String?

    /// The thread inside ``withExclusiveAccess(_:)``, with the lock's
    /// descriptor and the target it protects (resolved once, so that one
    /// locked section works on one file).
    private struct Holder {
        var thread: UInt
        var descriptor: Int32
        var target: String
    }

    private let holder = Locked<Holder?>(nil)
    /// A stamp found older than the clock tick, and the hash of the bytes
    /// read with it: while the file keeps that stamp, it holds those bytes.
    private let trustedStamp = Locked<(stamp: Platform.FileStamp, hash: UInt64)?>(nil)
    let lastSweep = Locked<ContinuousClock.Instant?>(nil)
    /// The target resolved for the open under way (``beginOpening()``).
    private let openingTarget = Locked<String?>(nil)
    /// Whether writes keep the file readable by its owner only (it holds
    /// secrets: ``keepPrivate()``).
    private let privateFile = Locked(false)

    /// Parents of directories the store created, until their fsync
    /// succeeds, across every backend in the process: the next locked call
    /// below them fsyncs them first.
    private static let unsyncedDirectories = Locked<Set<String>>([])

    /// A backend for the file at `url`.
    ///
    /// - Parameters:
    ///   - url: the file; a relative path is taken from the current directory.
    ///   - maxFileSize: files larger than this read as corrupt.
    ///   - lockTimeout: how long to wait for another process's lock.
    public convenience init(
        fileURL url: URL, maxFileSize: Int = PreferencesLimits().maxFileSize,
        lockTimeout: Duration = PreferencesLimits().lockTimeout
    ) {
        self.init(
            fileURL: url, maxFileSize: maxFileSize, lockTimeout: lockTimeout,
            orphanSweepInterval: .seconds(60))
    }

    /// A backend with a chosen interval between sweeps of orphaned temporary files.
    init(
        fileURL url: URL, maxFileSize: Int, lockTimeout: Duration, orphanSweepInterval: Duration,
        missingDirectoryAdvice: String? = nil
    ) {
        var path = url.path
        if !path.hasPrefix("/") { path = Platform.currentDirectory() + "/" + path }
        self.path = path
        self.maxFileSize = maxFileSize
        self.lockTimeout = lockTimeout
        self.orphanSweepInterval = orphanSweepInterval
        self.missingDirectoryAdvice = missingDirectoryAdvice
    }

    /// The file's path.
    public var location: String { path }

    /// `file:` and the canonical path of the target (symlinks followed where
    /// safe), so every spelling of one file shares one store state. When the
    /// directory does not exist yet, its deepest existing ancestor is
    /// canonicalised and the rest appended.
    public var identity: String? {
        identity(ofTarget: (try? Platform.resolveSymlinksSafely(path)) ?? path)
    }

    /// File reads are local and quick.
    public var tuning: StorageTuning { StorageTuning(readsAreLocal: true) }

    /// An open with ``identity``, for which the file's link is resolved
    /// once: the watch and the reads of that open (until it ends) use this
    /// resolution rather than resolving the path again, which saves a
    /// `readlink` each. An open is one moment as far as the link goes; a
    /// resolution made microseconds earlier is as safe as a fresh one, as
    /// the file is still opened with `O_NOFOLLOW` (S19, <doc:StoreGuarantees>).
    /// When it ends, every call resolves the path afresh.
    public func beginOpening() -> StorageOpening {
        let target = try? Platform.resolveSymlinksSafely(path)
        openingTarget.withLock { $0 = target }
        return StorageOpening(identity: identity(ofTarget: target ?? path)) { [openingTarget] in
            openingTarget.withLock { $0 = nil }
        }
    }

    private func identity(ofTarget target: String) -> String {
        var existing = Platform.parentDirectory(of: target)
        let name = Platform.lastComponent(of: target)
        var canonical = Platform.realPath(existing)
        // The usual case, an existing directory and a plain name: realpath's
        // answer is already canonical, so only the name is appended (into
        // one string of its final size: every open makes one).
        if let directory = canonical, name != "", name != ".", name != ".." {
            var identity = "file:"
            identity.reserveCapacity(6 + directory.utf8.count + name.utf8.count)
            if directory != "/" { identity += directory }
            identity += "/"
            identity += name
            return identity
        }
        var rest = [name]
        while canonical == nil && existing != "/" && existing != "." {
            rest.insert(Platform.lastComponent(of: existing), at: 0)
            existing = Platform.parentDirectory(of: existing)
            canonical = Platform.realPath(existing)
        }
        var components = (canonical ?? existing).split(separator: "/").map(String.init)
        for component in rest {
            switch component {
            case "", ".": continue
            case "..": if !components.isEmpty { components.removeLast() }
            default: components.append(component)
            }
        }
        return "file:/" + components.joined(separator: "/")
    }

    /// The file actually read and replaced: `path` with symlinks followed
    /// where safe (S19); inside ``withExclusiveAccess(_:)``, the one locked.
    func target() throws -> String {
        if let held = held?.target { return held }
        if let opening = openingTarget.withLock({ $0 }) { return opening }
        return try Platform.resolveSymlinksSafely(path)
    }

    private func revision(generation: UInt64, stamp: Platform.FileStamp, hash: UInt64)
        -> StorageRevision
    {
        // "g<generation>-<device>-<inode>-<size>-<mtime>-<ctime>-<hash>",
        // written digit by digit into one buffer: a write and a look each
        // make one, and string interpolation of eight numbers cost several
        // thousand instructions.
        var token = RevisionToken()
        token.append("g")
        token.append(decimal: generation)
        token.append("-")
        token.append(decimal: stamp.device)
        token.append("-")
        token.append(decimal: stamp.inode)
        token.append("-")
        token.append(signed: stamp.size)
        token.append("-")
        token.append(signed: stamp.modifiedSeconds)
        token.append(".")
        token.append(signed: stamp.modifiedNanoseconds)
        token.append("-")
        token.append(signed: stamp.changedSeconds)
        token.append(".")
        token.append(signed: stamp.changedNanoseconds)
        token.append("-")
        token.append(hex: hash)
        return StorageRevision(token.string)
    }

    /// What this thread holds inside ``withExclusiveAccess(_:)``.
    private var held: Holder? {
        let thread = Platform.currentThread()
        return holder.withLock { $0?.thread == thread ? $0 : nil }
    }

    private func generation(lockPath: String) -> UInt64 {
        held.map { Platform.readGeneration(descriptor: $0.descriptor) }
            ?? Platform.readGeneration(path: lockPath)
    }

    /// Reads the target file; nil bytes when it does not exist.
    public func read() throws -> StoredContents {
        let target = try target()
        let generation = generation(lockPath: target + ".lock")
        return try read(target, generation: generation, now: Platform.fileClockNow())
    }

    /// Reads `target`, with the write generation and the file clock's time
    /// taken before it (so a caller that has them resolves the link and
    /// reads the lock file once).
    private func read(_ target: String, generation: UInt64, now: Int64) throws
        -> StoredContents
    {
        guard
            let (bytes, stamp) = try Platform.readFile(
                target, limit: maxFileSize, followingSymlinks: false)
        else {
            return StoredContents(bytes: nil, revision: .absent)
        }
        let hash = ContentHash.of(bytes)
        if !stamp.isRacy(at: now) { trustedStamp.withLock { $0 = (stamp, hash) } }
        return StoredContents(
            bytes: bytes, revision: revision(generation: generation, stamp: stamp, hash: hash))
    }

    /// The write generation, the target's stamp from `stat`, and the hash of
    /// its bytes, which is read again only while the stamp is too recent to
    /// trust (or not seen before).
    public func currentRevision() throws -> StorageRevision {
        try look().revision
    }

    /// The current revision, with the write generation and the file's stamp
    /// it was made from (nil when the file does not exist).
    private func look() throws -> (
        revision: StorageRevision, generation: UInt64, stamp: Platform.FileStamp?
    ) {
        let target = try target()
        let generation = generation(lockPath: target + ".lock")
        let now = Platform.fileClockNow()
        guard let stamp = try Platform.fileStamp(target) else { return (.absent, generation, nil) }
        if stamp.isDirectory {
            throw Platform.ioError("read", target, code: Platform.isADirectory)
        }
        if !stamp.isRacy(at: now), let trusted = trustedStamp.withLock({ $0 }),
            trusted.stamp == stamp
        {
            return (
                revision(generation: generation, stamp: stamp, hash: trusted.hash), generation,
                stamp
            )
        }
        return (try read(target, generation: generation, now: now).revision, generation, stamp)
    }

    /// Whether, inside ``withExclusiveAccess(_:)``, no writer that takes the
    /// lock wrote since `revision` was made here: the lock file still holds
    /// the generation `revision` starts with ("g<generation>-").
    func isUnchangedByLockingWriters(since revision: StorageRevision) -> Bool {
        guard let held, let end = revision.token.firstIndex(of: "-") else { return false }
        return revision.token.first == "g"
            && UInt64(revision.token.dropFirst().prefix(upTo: end))
                == Platform.readGeneration(descriptor: held.descriptor)
    }

    /// Holds an exclusive `flock` on `<file>.lock` while `body` runs;
    /// re-entrant on one thread, exclusive against every other thread and
    /// process. Fsyncs directories left unsynced first.
    public func withExclusiveAccess<T>(_ body: () throws -> T) throws -> T {
        let thread = Platform.currentThread()
        if holder.withLock({ $0?.thread == thread }) { return try body() }
        let target = try Platform.resolveSymlinksSafely(path)
        let directory = Platform.parentDirectory(of: target)
        if let missingDirectoryAdvice, try Platform.fileStamp(directory)?.isDirectory != true {
            throw PreferencesError.io(
                operation: "open the store's directory", path: directory, code: Platform.notFound,
                message: missingDirectoryAdvice)
        }
        let owner = try ownerForNewFiles(target: target)
        let created = try Platform.makeDirectories(directory, owner: owner)
        if !created.isEmpty {
            Self.unsyncedDirectories.withLock { pending in
                for made in created { pending.insert(Platform.parentDirectory(of: made)) }
            }
        }
        let descriptor = try Platform.lockExclusively(
            target + ".lock", timeout: lockTimeout, owner: owner)
        holder.withLock { $0 = Holder(thread: thread, descriptor: descriptor, target: target) }
        defer {
            holder.withLock { $0 = nil }
            Platform.unlock(descriptor)
        }
        try syncUnsyncedDirectories(around: directory)
        if Platform.isDirectorySyncDue(descriptor: descriptor) {
            try Platform.syncDirectory(directory)
            Platform.clearDirectorySyncDue(descriptor: descriptor)
        }
        return try body()
    }

    /// Running as root: who should own what the store creates (S14) — the
    /// file's owner, else the owner of the nearest existing directory.
    func ownerForNewFiles(target: String) throws -> (uid: UInt32, gid: UInt32)? {
        guard Platform.isEffectivelyRoot else { return nil }
        if let stamp = try? Platform.fileStamp(target) { return (stamp.uid, stamp.gid) }
        var directory = Platform.parentDirectory(of: target)
        while true {
            if let stamp = try? Platform.fileStamp(directory), stamp.isDirectory {
                return (stamp.uid, stamp.gid)
            }
            let parent = Platform.parentDirectory(of: directory)
            if parent == directory { return nil }
            directory = parent
        }
    }

    /// Fsyncs the unsynced directories that hold `directory` (or are it).
    private func syncUnsyncedDirectories(around directory: String) throws {
        let due = Self.unsyncedDirectories.withLock { pending in
            pending.isEmpty
                ? []
                : pending.filter { directory == $0 || directory.hasPrefix($0 + "/") || $0 == "/" }
        }
        // Outermost last: a directory's own entry is in its parent.
        for path in due.sorted(by: { $0.count > $1.count }) {
            try Platform.syncDirectory(path)
            _ = Self.unsyncedDirectories.withLock { $0.remove(path) }
        }
    }

    /// Replaces the file atomically and durably if its revision is still `expected`.
    public func write(_ bytes: [UInt8], ifRevision expected: StorageRevision) throws
        -> StorageRevision?
    {
        try withExclusiveAccess {
            // The stamp and generation of this check serve the write: holding
            // the lock, no writer that takes it changes them meanwhile.
            let current = try look()
            guard current.revision == expected else { return nil }
            let target = try target()
            let directory = Platform.parentDirectory(of: target)
            removeOrphanedTemporaryFiles(of: target)
            let existing = current.stamp
            let owner = try existing.map { ($0.uid, $0.gid) } ?? ownerForNewFiles(target: target)
            // The first file in a directory: whoever made the directory (maybe
            // another process that died) may not have made its entry durable.
            if existing == nil { try syncAncestors(of: directory) }
            // Bookkeeping first: once the file is renamed into place, nothing
            // but the directory's fsync may fail the write.
            let generation = try bumpGeneration(from: current.generation)
            var mode = existing?.mode ?? 0o600
            if privateFile.withLock({ $0 }) { mode &= 0o7700 }
            let stamp = try Platform.replaceFile(target, with: bytes, mode: mode, owner: owner)
            FileWatcher.noteWrite(to: [path, target])
            try syncDirectory(directory)
            guard let stamp else {
                // The file is in place but unstamped: a revision that matches
                // nothing makes the next check read the file.
                return StorageRevision("g\(generation)-unstamped-\(Platform.randomSuffix())")
            }
            return revision(generation: generation, stamp: stamp, hash: ContentHash.of(bytes))
        }
    }

    /// Fsyncs every directory above `directory` that the caller can open,
    /// innermost first, so that the path to it survives a crash.
    private func syncAncestors(of directory: String) throws {
        var current = directory
        while current != "/" && current != "." {
            current = Platform.parentDirectory(of: current)
            do {
                try Platform.syncDirectory(current)
            } catch PreferencesError.io(let operation, _, let code, _)
                where operation == "open directory" && Platform.isPermissionDenied(code)
            {
                // A directory the caller may pass through but not read (mode
                // 0711) cannot be fsynced by it; its entry is its owner's.
                continue
            }
        }
    }

    /// Fsyncs the target's `directory` after a rename into it and clears the
    /// lock file's mark; when the fsync fails, the mark stays for the next
    /// locked call, in whatever process.
    func syncDirectory(_ directory: String) throws {
        try Platform.syncDirectory(directory)
        if let held { Platform.clearDirectorySyncDue(descriptor: held.descriptor) }
    }

    /// Writes the next write generation, after `known` (read under this
    /// lock) or else after the one in the lock file.
    private func bumpGeneration(from known: UInt64? = nil) throws -> UInt64 {
        guard let held else { return 0 }
        let next = (known ?? Platform.readGeneration(descriptor: held.descriptor)) &+ 1
        try Platform.writeGeneration(next, descriptor: held.descriptor, path: held.target + ".lock")
        return next
    }

    /// Renames the file to `<name>.corrupt-<stamp>` (with a counter if
    /// taken), holding the lock, if it still has `contents.revision`.
    public func setAsideCorrupt(_ contents: StoredContents, stamp: String) throws -> String? {
        try withExclusiveAccess {
            guard contents.bytes != nil, try look().revision == contents.revision else {
                return nil
            }
            let target = try target()
            // Never rename over an earlier backup (or anything else there,
            // a link included): that would destroy its bytes.
            var place = target + ".corrupt-" + stamp
            var attempt = 1
            while Platform.exists(place) {
                attempt += 1
                place = target + ".corrupt-" + stamp + "-\(attempt)"
            }
            _ = try bumpGeneration()
            try Platform.rename(target, place)
            try syncDirectory(Platform.parentDirectory(of: target))
            return place
        }
    }

    /// Keeps the file readable by its owner only: ``keepPrivate()``.
    public var privacy: (any StoragePrivacy)? { self }

    /// From now on, writes give the file no permissions for its group and
    /// others; returns whether the file has some now.
    public func keepPrivate() throws -> Bool {
        privateFile.withLock { $0 = true }
        guard let stamp = try Platform.fileStamp(try target()) else { return false }
        return stamp.mode & 0o077 != 0
    }

    /// Watches the file's directory (inotify, kqueue, or polling); every
    /// event is ``StorageWatchEvent/changed(_:)`` without contents.
    public func watch(_ onEvent: @escaping @Sendable (StorageWatchEvent) -> Void) throws
        -> (any StorageWatch)?
    {
        try FileWatcher.start(
            path: path, target: openingTarget.withLock { $0 }, onChange: { onEvent(.changed(nil)) })
    }
}
