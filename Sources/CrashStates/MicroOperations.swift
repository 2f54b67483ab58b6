import Preferences

/// The recorded calls broken into the pieces a file system may persist
/// separately (ALICE's micro-operations): a directory entry added, removed
/// or renamed; a file's bytes written or its size set.
///
/// Paths are relative to the workload's directory (`""` is the directory
/// itself).
struct MicroOperation {
    /// What bytes a write puts down: the call's data, or (where a part of
    /// a call persisted) zeros or garbage where its data did not arrive.
    enum Fill { case data, zeros, garbage, size }

    enum Kind {
        /// A directory entry: `path` now names `inode` (a new file or
        /// directory, or a hard link).
        case add(path: String, inode: Int)
        case remove(path: String)
        /// `replacing` says whether `to` named a file when it was renamed.
        case rename(from: String, to: String, replacing: Bool, inode: Int)
        /// `bytes` at `offset` of `inode`, which grows (with zeros) to hold
        /// them.
        case write(inode: Int, offset: Int, bytes: [UInt8], fill: Fill)
        /// `inode`'s size set to `length` (zeros past its old end).
        case size(inode: Int, length: Int)
        /// `inode`'s permission bits set (`fchmod`): durable with its fsync.
        case mode(inode: Int, mode: UInt32)
    }

    var kind: Kind
    /// The recorded call it comes from (its index in the record).
    var call: Int

    /// The directories whose fsync makes it durable (entries only).
    var directories: [String] {
        switch kind {
        case .add(let path, _), .remove(let path): [parent(path)]
        case .rename(let from, let to, _, _):
            parent(from) == parent(to) ? [parent(to)] : [parent(from), parent(to)]
        case .write, .size, .mode: []
        }
    }

    /// The file whose fsync makes it durable (data and sizes only).
    var inode: Int? {
        switch kind {
        case .write(let inode, _, _, _), .size(let inode, _), .mode(let inode, _): inode
        case .add, .remove, .rename: nil
        }
    }

    var isEntry: Bool { inode == nil }
}

func parent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[..<slash])
}

/// The record of one workload, broken into micro-operations, with the
/// barriers (fsyncs) and acknowledgements of each call.
struct BrokenRecord {
    static let blockSize = 4096

    var calls: [DiskOperation]
    /// The workload's directory, links resolved.
    var root: String
    var micro: [MicroOperation] = []
    /// Each call's change to a file's bytes, whole and in part.
    var dataChanges: [DataChange] = []
    /// For each call that is an fsync: the micro-operations it made durable
    /// (entries, and the whole data changes).
    var barriers: [Int: [Int]] = [:]
    /// Every fsync, of anything (ext4 commits its journal on each).
    var syncCalls: [Int] = []
    /// How many marks ("ack") precede each call, and after the last.
    var acknowledged: [Int] = []
    /// The inodes of the initial tree, by path.
    var initialInodes: [String: Int] = [:]
    /// The initial files' bytes, by inode.
    var initialContents: [Int: [UInt8]] = [:]
    /// The inodes that are directories.
    var directoryInodes = Set<Int>()
    /// Each file's permission bits when it was made (or in the initial
    /// tree): for a file created, the mode asked for (the umask can only
    /// narrow it).
    var createdModes: [Int: UInt32] = [:]

    /// Breaks `calls` up; `root` is the workload's directory with every
    /// link resolved, as the recorded paths are. A call the replay cannot
    /// model (a path outside `root`, a file it does not know) throws,
    /// naming the call: a state left unbuilt is never silent.
    init(calls: [DiskOperation], root: String, initial: FileTree) throws {
        self.calls = calls
        self.root = root
        var replay = Replay(root: root, initial: initial, record: self)
        for (call, operation) in calls.enumerated() {
            replay.record.acknowledged.append(replay.acks)
            do {
                try replay.breakUp(operation, call: call)
            } catch let reason as Unmodelled {
                throw ExplorerError(
                    "the replay cannot model call #\(call), \(Self.describe(operation, root: root)): \(reason.text)"
                )
            }
        }
        replay.record.acknowledged.append(replay.acks)
        self = replay.record
    }

    /// A one-line description of call `index`, relative to `root`.
    static func describe(_ operation: DiskOperation, root: String) -> String {
        func short(_ path: String) -> String {
            path == root
                ? "." : path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
        }
        switch operation {
        case .create(let path, let mode):
            return "create \(short(path)) mode \(String(mode, radix: 8))"
        case .write(let path, let offset, let bytes):
            return "write \(short(path)) at \(offset), \(bytes.count) bytes"
        case .truncate(let path, let length): return "ftruncate \(short(path)) to \(length)"
        case .sync(let path): return "fsync \(short(path))"
        case .syncDirectory(let path): return "fsync directory \(short(path))"
        case .rename(let from, let to): return "rename \(short(from)) to \(short(to))"
        case .link(let from, let to): return "link \(short(from)) to \(short(to))"
        case .unlink(let path): return "unlink \(short(path))"
        case .makeDirectory(let path): return "mkdir \(short(path))"
        case .changeMode(let path, let mode):
            return "fchmod \(short(path)) \(String(mode, radix: 8))"
        case .changeOwner(let path, let uid, let gid): return "fchown \(short(path)) \(uid):\(gid)"
        case .mark(let label): return "(\(label))"
        }
    }
}

/// The calls replayed in order to break them up: what each path names and
/// each file holds after each call, and what an fsync of each file or
/// directory would make durable.
