import Preferences

/// Why the replay cannot model a call.
struct Unmodelled: Error {
    var text: String
    init(_ text: String) { self.text = text }
}

/// The calls replayed in order to break them up: what each path names and
/// each file holds after each call, and what an fsync of each file or
/// directory would make durable.
struct Replay {
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
                self.record.createdModes[next] = initial.modes[path] ?? 0o600
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

    /// The file or directory `path` names (-1: the workload's directory);
    /// throws when it names nothing the replay knows of.
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
            if case .create(_, let mode) = operation { record.createdModes[next] = mode }
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
            let inode = try inode(path)
            let path = try relative(path)
            names[path] = nil
            // The last name of a file: its data goes, in pieces, before
            // its entry (ALICE's unlink).
            if !names.values.contains(inode), let content = contents[inode], !content.isEmpty {
                change(inode, to: [], call: call, unlinking: true) {
                    Splits.truncateParts(from: content.count, to: 0)
                }
            }
            add(.remove(path: path), call: call)
        case .rename(let from, let to):
            let inode = try inode(from)
            let (from, to) = (try relative(from), try relative(to))
            let replacing = names[to] != nil
            names[from] = nil
            names[to] = inode
            // A directory's entries go with it.
            if record.directoryInodes.contains(inode) {
                Self.moveEntries(&names, from: from, to: to)
            }
            add(.rename(from: from, to: to, replacing: replacing, inode: inode), call: call)
        case .write(let path, let offset, let bytes):
            let inode = try inode(path)
            let before = contents[inode] ?? []
            let after = Splits.apply(
                [SplitStep(offset: offset, bytes: bytes, fill: .data)], to: before)
            change(
                inode, to: after, call: call,
                whole: .write(
                    inode: inode, offset: offset, bytes: bytes, fill: .data)
            ) { ordered in
                Splits.writeParts(bytes, at: offset, size: before.count, ordered: ordered)
            }
        case .truncate(let path, let length):
            let inode = try inode(path)
            let before = contents[inode] ?? []
            var after = before
            if length < after.count {
                after.removeSubrange(length...)
            } else {
                after += [UInt8](repeating: 0, count: length - after.count)
            }
            change(inode, to: after, call: call, whole: .size(inode: inode, length: length)) {
                $0 ? [] : Splits.truncateParts(from: before.count, to: length)
            }
        case .sync(let path):
            record.syncCalls.append(call)
            barrier(at: call, covering: issuedByInode[try inode(path)] ?? [])
        case .syncDirectory(let path):
            record.syncCalls.append(call)
            // A directory above the workload's holds only the entries that
            // lead to it, which every state has: no effect on the states.
            if root.hasPrefix(path == "/" ? "/" : path + "/") { return }
            let inode = try inode(path)
            guard inode < 0 || record.directoryInodes.contains(inode) else {
                throw Unmodelled("\(path) is no directory the replay knows of")
            }
            barrier(at: call, covering: issuedByDirectory[try relative(path)] ?? [])
        case .changeMode(let path, let mode):
            let inode = try inode(path)
            guard !record.directoryInodes.contains(inode) else { return }
            change(
                inode, to: contents[inode] ?? [], call: call, whole: .mode(inode: inode, mode: mode)
            ) { _ in [] }
        case .changeOwner(let path, _, _):
            _ = try inode(path)
        }
    }

    /// Renames every path below the directory `from` to the same path
    /// below `to`.
    ///
    /// Entries are named by path: an entry added, removed or synced below a
    /// directory is taken as one of the directory of that name when the
    /// call was made. A directory renamed and then changed inside is
    /// modelled as if its rename had persisted with those changes; the
    /// library renames a directory only once it is whole and synced (a
    /// legacy envdir cleaned up).
    static func moveEntries<Value>(_ names: inout [String: Value], from: String, to: String) {
        let below = from + "/"
        for path in Array(names.keys) where path.hasPrefix(below) {
            names[to + "/" + path.dropFirst(below.count)] = names.removeValue(forKey: path)
        }
    }

    /// An unlink's truncation to nothing.
    mutating func change(
        _ inode: Int, to after: [UInt8], call: Int, unlinking: Bool,
        parts: () -> [[SplitStep]]
    ) {
        change(
            inode, to: after, call: call, whole: .size(inode: inode, length: 0),
            unlinking: unlinking
        ) { $0 ? [] : parts() }
    }

    /// A call's change of `inode`'s bytes to `after`: the whole change as
    /// one micro-operation, and each part that may persist (for the POSIX
    /// model, and `ordered` for ext4) whose bytes differ from the file's
    /// before and after the call and from every other part's.
    mutating func change(
        _ inode: Int, to after: [UInt8], call: Int, whole: MicroOperation.Kind,
        unlinking: Bool = false, parts: (_ ordered: Bool) -> [[SplitStep]]
    ) {
        let before = contents[inode] ?? []
        contents[inode] = after
        let wholeIndex = add(whole, call: call)
        var change = DataChange(
            inode: inode, call: call, whole: [wholeIndex], parts: [], orderedParts: [],
            unlinking: unlinking)
        for ordered in [false, true] {
            var seen: Set<[UInt8]> = [before, after]
            var built: [[Int]] = []
            for steps in parts(ordered) {
                guard seen.insert(Splits.apply(steps, to: before)).inserted else { continue }
                built.append(
                    steps.map { step in
                        let kind: MicroOperation.Kind =
                            step.fill == .size
                            ? .size(inode: inode, length: step.offset)
                            : .write(
                                inode: inode, offset: step.offset, bytes: step.bytes,
                                fill: step.fill)
                        record.micro.append(MicroOperation(kind: kind, call: call))
                        return record.micro.count - 1
                    })
            }
            if ordered { change.orderedParts = built } else { change.parts = built }
        }
        record.dataChanges.append(change)
    }

    /// Adds one micro-operation, noting which fsync would make it durable.
    @discardableResult
    mutating func add(_ kind: MicroOperation.Kind, call: Int) -> Int {
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
        return index
    }

    /// An fsync at call `call`: it makes durable those of `covered` that
    /// were not yet.
    mutating func barrier(at call: Int, covering covered: [Int]) {
        record.barriers[call] = covered.filter { !durable.contains($0) }
        durable.formUnion(covered)
    }
}
