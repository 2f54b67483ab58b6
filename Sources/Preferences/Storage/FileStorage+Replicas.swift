import Dispatch

/// Registering the processes that have the store open (F2,
/// <doc:RollingOutAChange>): one file per process in `NAME.replicas.d/`
/// beside the store, named `HOST-PID.json`, which the process holds an
/// `flock` on while it has the store open. The system releases the lock
/// when the process ends, however it ends, so a file nobody holds is a
/// dead process's registration: whoever lists the replicas removes it.
extension FileStorage {
    /// `NAME.replicas.d/` beside the target file.
    public var replicas: (any ReplicaRegistry)? { FileReplicas(storage: self) }

    /// The directory of registrations: the store's name with `.json`
    /// replaced by `.replicas.d` (`default.json` → `default.replicas.d`).
    public var replicasDirectory: String { siblingPath(suffix: ".replicas.d") }

    /// `NAME` + `suffix` beside the target file (`.json` dropped from `NAME`).
    func siblingPath(suffix: String) -> String {
        let target = (try? target()) ?? path
        let name = Platform.lastComponent(of: target)
        let stem = name.hasSuffix(".json") ? String(name.dropLast(5)) : name
        return Platform.parentDirectory(of: target) + "/" + stem + suffix
    }
}

/// One registration file per process, locked while it is open.
struct FileReplicas: ReplicaRegistry {
    let storage: FileStorage

    /// Creates this process's registration file, locked while it is open.
    func register(_ replica: PreferencesReplica) throws -> (any ReplicaRegistration)? {
        let directory = storage.replicasDirectory
        let target = try storage.target()
        // Never creates the store's own directory: one that is missing (not
        // made yet, or removed while the store is open, which its watch
        // then waits for) holds no registration until it is back.
        guard try Platform.fileStamp(Platform.parentDirectory(of: target))?.isDirectory == true
        else { return nil }
        try Platform.checkLinks(directory)
        try Platform.makeDirectories(directory, owner: try storage.ownerForNewFiles(target: target))
        let path = directory + "/" + Self.fileName(host: replica.host, pid: replica.pid)
        // A file of an earlier process with this pid (a reused pid, or one
        // of this process's own earlier opens) is replaced.
        let descriptor = try Platform.createLockedFile(
            path, bytes: Array(replica.jsonText.utf8) + [0x0A])
        return FileRegistration(descriptor: descriptor, path: path)
    }

    static func fileName(host: String, pid: Int32) -> String {
        let safe = host.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" ? $0 : "_" }
        return String(safe) + "-\(pid).json"
    }

    /// The live registrations, sorted by host and pid. Files nobody holds a
    /// lock on are removed on the way; a registration being rewritten as it
    /// is read is read again.
    func list() throws -> [PreferencesReplica] {
        let held: (directory: String, names: [String])
        do {
            // Files nobody holds are removed from it: never through a link
            // the caller must not follow (S19).
            let directory = try Platform.resolveSymlinksSafely(storage.replicasDirectory)
            held = (directory, try Platform.heldRegistrations(in: directory))
        } catch PreferencesError.io(_, _, let code, _) where code == Platform.notFound {
            return []
        }
        var found: [PreferencesReplica] = []
        for name in held.names {
            let path = held.directory + "/" + name
            for _ in 0..<5 {
                guard let (bytes, _) = try Platform.readFile(path, limit: 1 << 16) else { break }
                if let replica = PreferencesReplica(jsonBytes: bytes) {
                    found.append(replica)
                    break
                }
            }
        }
        return found.sorted { ($0.host, $0.pid) < ($1.host, $1.pid) }
    }

    /// Calls `onChange` whenever a registration appears, changes or is
    /// removed (inotify on Linux; elsewhere every 20 ms). A process that
    /// dies leaves no event (only its lock goes): a waiter also looks once
    /// a second.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)? {
        let directory = storage.replicasDirectory
        try Platform.checkLinks(directory)
        try Platform.makeDirectories(
            directory, owner: try storage.ownerForNewFiles(target: try storage.target()))
        return try RegistrationWatch(directory: directory, onChange: onChange)
    }
}

/// A registration file held open and locked (see ``ReplicaRegistry/register(_:)``).
final class FileRegistration: ReplicaRegistration {
    private let file: Locked<Int32?>
    private let path: String

    init(descriptor: Int32, path: String) {
        file = Locked(descriptor)
        self.path = path
    }

    func update(_ replica: PreferencesReplica) throws {
        try file.withLock { descriptor in
            guard descriptor != nil else { return }
            try Platform.rewriteLockedFile(path, bytes: Array(replica.jsonText.utf8) + [0x0A])
        }
    }

    func close() {
        file.withLock { descriptor in
            if let descriptor { Platform.removeLockedFile(descriptor, path: path) }
            descriptor = nil
        }
    }

    deinit { close() }
}
