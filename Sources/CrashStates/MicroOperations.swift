import Preferences

/// The recorded calls broken into the pieces a file system may persist
/// separately (ALICE's micro-operations): a directory entry added, removed
/// or renamed; one block of a file's data; a file's size.
///
/// Paths are relative to the workload's directory (`""` is the directory
/// itself); calls outside it (the fsync of the directories above it) only
/// count as barriers where they name it.
struct MicroOperation {
    enum Kind {
        /// A directory entry: `path` now names `inode` (a new file or
        /// directory, or a hard link).
        case add(path: String, inode: Int)
        case remove(path: String)
        /// `replacing` says whether `to` named a file when it was renamed.
        case rename(from: String, to: String, replacing: Bool, inode: Int)
        /// A block of `inode` as it stood after the call: `bytes` at `offset`.
        case block(inode: Int, index: Int, offset: Int, bytes: [UInt8])
        /// `inode`'s size after the call; `extending` for a write past the
        /// end (not an explicit truncation).
        case size(inode: Int, length: Int, extending: Bool)
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
        case .block, .size: []
        }
    }

    /// The file whose fsync makes it durable (data and sizes only).
    var inode: Int? {
        switch kind {
        case .block(let inode, _, _, _), .size(let inode, _, _): inode
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
    /// For each call that is an fsync: the micro-operations it made durable.
    var barriers: [Int: [Int]] = [:]
    /// How many marks ("ack") precede each call, and after the last.
    var acknowledged: [Int] = []
    /// The inodes of the initial tree, by path.
    var initialInodes: [String: Int] = [:]
    /// The initial files' bytes, by inode.
    var initialContents: [Int: [UInt8]] = [:]
    /// The inodes that are directories.
    var directoryInodes = Set<Int>()

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
/// Why the replay cannot model a call.
private struct Unmodelled: Error {
    var text: String
    init(_ text: String) { self.text = text }
}

private struct Replay {
    let root: String
    var record: BrokenRecord
    var names: [String: Int] = [:]
    var contents: [Int: [UInt8]] = [:]
    var next = 0
    var acks = 0
    var issuedByInode: [Int: [Int]] = [:]
    var issuedByDirectory: [String: [Int]] = [:]
    var durable = Set<Int>()

    /// Numbers the initial tree's files and directories in path order.
    init(root: String, initial: FileTree, record: BrokenRecord) {
        self.root = root
        self.record = record
        for (path, entry) in initial.entries.sorted(by: { $0.key < $1.key }) {
            names[path] = next
            if case .file(let bytes) = entry {
                contents[next] = bytes
            } else {
                self.record.directoryInodes.insert(next)
            }
            next += 1
        }
        self.record.initialInodes = names
        self.record.initialContents = contents
    }

    /// `path` relative to the workload's directory (`""` for the directory
    /// itself); throws for a path outside it.
    func relative(_ path: String) throws -> String {
        if path == root { return "" }
        guard path.hasPrefix(root + "/") else {
            throw Unmodelled("\(path) lies outside the workload's directory \(root)")
        }
        return String(path.dropFirst(root.count + 1))
    }

    /// The file or directory `path` names; throws when it names nothing
    /// the replay knows of.
    func inode(_ path: String) throws -> Int {
        let relative = try relative(path)
        if relative.isEmpty { return -1 }
        guard let inode = names[relative] else {
            throw Unmodelled("\(relative) names nothing the replay knows of")
        }
        return inode
    }

    /// Adds the micro-operations of call number `call`.
    mutating func breakUp(_ operation: DiskOperation, call: Int) throws {
        switch operation {
        case .mark(let label):
            if label == "ack" { acks += 1 }
        case .create(let path, _), .makeDirectory(let path):
            let path = try relative(path)
            if names[path] != nil { throw Unmodelled("\(path) already names a file") }
            if case .makeDirectory = operation { record.directoryInodes.insert(next) }
            names[path] = next
            contents[next] = []
            add(.add(path: path, inode: next), call: call)
            next += 1
        case .link(let from, let to):
            let inode = try inode(from)
            let to = try relative(to)
            names[to] = inode
            add(.add(path: to, inode: inode), call: call)
        case .unlink(let path):
            _ = try inode(path)
            let path = try relative(path)
            names[path] = nil
            add(.remove(path: path), call: call)
        case .rename(let from, let to):
            let inode = try inode(from)
            let (from, to) = (try relative(from), try relative(to))
            let replacing = names[to] != nil
            names[from] = nil
            names[to] = inode
            add(.rename(from: from, to: to, replacing: replacing, inode: inode), call: call)
        case .write(let path, let offset, let bytes):
            write(bytes, at: offset, to: try inode(path), call: call)
        case .truncate(let path, let length):
            let inode = try inode(path)
            var content = contents[inode] ?? []
            if length < content.count {
                content.removeSubrange(length...)
            } else {
                content += [UInt8](repeating: 0, count: length - content.count)
            }
            contents[inode] = content
            add(.size(inode: inode, length: length, extending: false), call: call)
        case .sync(let path):
            barrier(at: call, covering: issuedByInode[try inode(path)] ?? [])
        case .syncDirectory(let path):
            // A directory above the workload's holds only the entries that
            // lead to it, which every state has: no effect on the states.
            if root.hasPrefix(path == "/" ? "/" : path + "/") { return }
            let inode = try inode(path)
            guard inode < 0 || record.directoryInodes.contains(inode) else {
                throw Unmodelled("\(path) is no directory the replay knows of")
            }
            barrier(at: call, covering: issuedByDirectory[try relative(path)] ?? [])
        case .changeMode(let path, _), .changeOwner(let path, _, _):
            _ = try inode(path)
        }
    }

    /// Adds one micro-operation, noting which fsync would make it durable.
    mutating func add(_ kind: MicroOperation.Kind, call: Int) {
        let index = record.micro.count
        let operation = MicroOperation(kind: kind, call: call)
        record.micro.append(operation)
        if let inode = operation.inode {
            issuedByInode[inode, default: []].append(index)
        } else {
            for directory in operation.directories {
                issuedByDirectory[directory, default: []].append(index)
            }
        }
    }

    /// A write: each block it touches, as it stands after the write, then
    /// the new size if it extends the file.
    mutating func write(_ bytes: [UInt8], at offset: Int, to inode: Int, call: Int) {
        let blockSize = BrokenRecord.blockSize
        var content = contents[inode] ?? []
        let end = offset + bytes.count
        let extending = end > content.count
        if extending { content += [UInt8](repeating: 0, count: end - content.count) }
        content.replaceSubrange(offset..<end, with: bytes)
        contents[inode] = content
        var block = offset / blockSize
        while block * blockSize < end {
            let start = block * blockSize
            let image = Array(content[start..<min(start + blockSize, content.count)])
            add(.block(inode: inode, index: block, offset: start, bytes: image), call: call)
            block += 1
        }
        if extending { add(.size(inode: inode, length: end, extending: true), call: call) }
    }

    /// An fsync at call `call`: it makes durable those of `covered` that
    /// were not yet.
    mutating func barrier(at call: Int, covering covered: [Int]) {
        record.barriers[call] = covered.filter { !durable.contains($0) }
        durable.formUnion(covered)
    }
}
