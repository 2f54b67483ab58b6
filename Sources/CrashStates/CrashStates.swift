/// One state a crash may leave: the directory's tree, and which pending
/// micro-operations persisted in it.
struct CrashState {
    /// The crash happened after this call (-1: before the first).
    var crashPoint: Int
    var tree: FileTree
    /// The pending micro-operations that persisted, and those that did not.
    var persisted: [Int]
    var lost: [Int]
}

/// Builds the states a crash after each call may leave, as a model allows.
///
/// At a crash point, the micro-operations an fsync covered are durable, and
/// the others pending. Each group of pending ones (a directory's entries, a
/// file's changes) persists independently, as one of the options
/// ``PendingChoices`` gives it. When the combinations of one crash point
/// are at most `exhaustiveLimit`, every one is built; beyond, as ALICE
/// does, the states where one group at a time differs from "everything
/// persisted" and from "nothing persisted".
struct CrashStateBuilder {
    var record: BrokenRecord
    var model: PersistenceModel
    var exhaustiveLimit = 256
    /// `--quick`: beyond the limit, only the states where one group differs
    /// from "everything persisted" (and "nothing persisted" itself), and of
    /// each change's parts at most ``quickPartsPerChange``, spread evenly
    /// (a 200 KiB archive rewritten has some 150 of them, at 4 KiB
    /// boundaries).
    var quick = false
    static let quickPartsPerChange = 16

    /// The distinct states of the crash after call `point`.
    func states(after point: Int) -> [CrashState] {
        var durable = Set<Int>()
        for call in 0...max(point, 0) where call <= point {
            durable.formUnion(record.barriers[call] ?? [])
        }
        let issued = record.micro.indices.filter { record.micro[$0].call <= point }
        let changes = record.dataChanges.filter {
            $0.call <= point && !(model == .ext4 && $0.unlinking)
        }
        if model == .ext4 {
            // Every fsync commits the journal: the entries made before it.
            if let last = record.syncCalls.last(where: { $0 <= point }) {
                durable.formUnion(
                    issued.filter { record.micro[$0].isEntry && record.micro[$0].call < last })
            }
            // Replace-via-rename: the journal commit that made a rename over
            // a file durable carried the renamed file's data written before it.
            for rename in issued where durable.contains(rename) {
                guard case .rename(_, _, true, let inode) = record.micro[rename].kind else {
                    continue
                }
                for change in changes where change.inode == inode && change.whole[0] < rename {
                    durable.formUnion(change.whole)
                }
            }
        }
        let entries = issued.filter { record.micro[$0].isEntry && !durable.contains($0) }
        let pending = changes.filter { !durable.contains($0.whole[0]) }
        let choices = PendingChoices(
            entries: entries, changes: pending, record: record, model: model,
            partsPerChange: quick ? Self.quickPartsPerChange : nil)
        let groups = choices.groups
        var vectors: [[Int]] = []
        if choices.combinations <= exhaustiveLimit {
            vectors = [[]]
            for group in groups {
                vectors = vectors.flatMap { vector in group.indices.map { vector + [$0] } }
            }
        } else {
            let all = groups.map { _ in 1 }
            let none = groups.map { _ in 0 }
            vectors = [all, none]
            for (position, group) in groups.enumerated() {
                for choice in group.indices {
                    var fromAll = all
                    fromAll[position] = choice
                    vectors.append(fromAll)
                    guard !quick else { continue }
                    var fromNone = none
                    fromNone[position] = choice
                    vectors.append(fromNone)
                }
            }
        }
        let candidates = Set(entries).union(
            pending.flatMap { change in
                change.whole + (model == .ext4 ? change.orderedParts : change.parts).joined()
            })
        var seen = Set<FileTree>()
        var states: [CrashState] = []
        for vector in vectors {
            var chosen = Set<Int>()
            for (position, group) in groups.enumerated() {
                chosen.formUnion(group[min(vector[position], group.count - 1)])
            }
            // A rename between two directories persists only when both keep it.
            if model == .posix {
                chosen = chosen.filter { index in
                    record.micro[index].directories.count < 2
                        || choices.entryDirectories.indices.allSatisfy { position in
                            !record.micro[index].directories.contains(
                                choices.entryDirectories[position])
                                || groups[position][vector[position]].contains(index)
                        }
                }
            }
            guard model != .ext4 || renamesCarryTheirData(chosen, pending: pending) else {
                continue
            }
            let tree = materialise(durable.union(chosen), upTo: point)
            guard seen.insert(tree).inserted else { continue }
            states.append(
                CrashState(
                    crashPoint: point, tree: tree,
                    persisted: candidates.filter(chosen.contains).sorted(),
                    lost: pending.flatMap(\.whole).filter { !chosen.contains($0) }
                        + entries.filter { !chosen.contains($0) }))
        }
        return states
    }

    /// What another process sees after call `point` while the run goes on:
    /// every call made so far, whole and in place (a state no crash is
    /// needed for).
    func liveState(after point: Int) -> CrashState {
        var included = Set<Int>()
        for (index, operation) in record.micro.enumerated()
        where operation.call <= point && operation.isEntry {
            included.insert(index)
        }
        for change in record.dataChanges where change.call <= point {
            included.formUnion(change.whole)
        }
        return CrashState(
            crashPoint: point, tree: materialise(included, upTo: point), persisted: [], lost: [])
    }

    /// ext4's replace-via-rename: a rename over a file persists only with
    /// the renamed file's changes made before it, whole.
    private func renamesCarryTheirData(_ chosen: Set<Int>, pending: [DataChange]) -> Bool {
        for index in chosen {
            guard case .rename(_, _, true, let inode) = record.micro[index].kind else { continue }
            for change in pending
            where change.inode == inode && change.whole[0] < index
                && !chosen.contains(change.whole[0])
            {
                return false
            }
        }
        return true
    }

    /// The tree that the initial directory and `included` micro-operations
    /// (issued up to call `point`) make.
    func materialise(_ included: Set<Int>, upTo point: Int) -> FileTree {
        var names = record.initialInodes
        var buffers = record.initialContents
        var modes = record.createdModes
        for (index, operation) in record.micro.enumerated()
        where operation.call <= point && included.contains(index) {
            switch operation.kind {
            case .add(let path, let inode):
                names[path] = inode
                if buffers[inode] == nil { buffers[inode] = [] }
            case .remove(let path):
                names[path] = nil
            case .rename(let from, let to, _, let inode):
                guard names[from] == inode else { continue }
                names[from] = nil
                names[to] = inode
                if record.directoryInodes.contains(inode) {
                    Replay.moveEntries(&names, from: from, to: to)
                }
            case .write(let inode, let offset, let bytes, _):
                var buffer = buffers[inode] ?? []
                if buffer.count < offset + bytes.count {
                    buffer += [UInt8](repeating: 0, count: offset + bytes.count - buffer.count)
                }
                buffer.replaceSubrange(offset..<offset + bytes.count, with: bytes)
                buffers[inode] = buffer
            case .mode(let inode, let mode):
                modes[inode] = mode
            case .size(let inode, let length):
                var buffer = buffers[inode] ?? []
                if length < buffer.count {
                    buffer.removeSubrange(length...)
                } else {
                    buffer += [UInt8](repeating: 0, count: length - buffer.count)
                }
                buffers[inode] = buffer
            }
        }
        var tree = FileTree()
        for (path, inode) in names {
            // An entry shows only where the directories above it persisted.
            var above = parent(path)
            var reachable = true
            while !above.isEmpty {
                guard let directory = names[above], record.directoryInodes.contains(directory)
                else {
                    reachable = false
                    break
                }
                above = parent(above)
            }
            guard reachable else { continue }
            if record.directoryInodes.contains(inode) {
                tree.entries[path] = .directory
            } else {
                tree.entries[path] = .file(buffers[inode] ?? [])
                if let mode = modes[inode], mode & 0o777 != 0o600 {
                    tree.modes[path] = mode & 0o777
                }
            }
        }
        return tree
    }
}
