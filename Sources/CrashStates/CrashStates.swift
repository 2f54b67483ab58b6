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
/// the others pending. Each pending group (a directory's entries, a block
/// of a file, a file's size) persists independently, as ``PendingChoices``
/// says; the model's rules then rule out some combinations. When the
/// combinations of one crash point are at most `exhaustiveLimit`, every
/// one is built; beyond, as ALICE does, the states where one group at a
/// time differs from "everything persisted" and from "nothing persisted".
struct CrashStateBuilder {
    var record: BrokenRecord
    var model: PersistenceModel
    var exhaustiveLimit = 256

    /// The distinct states of the crash after call `point`.
    func states(after point: Int) -> [CrashState] {
        var durable = Set<Int>()
        for call in 0...max(point, 0) where call <= point {
            durable.formUnion(record.barriers[call] ?? [])
        }
        let issued = record.micro.indices.filter { record.micro[$0].call <= point }
        if model == .ext4 {
            // Replace-via-rename: the journal commit that made a rename over
            // a file durable carried the renamed file's data written before it.
            for rename in issued where durable.contains(rename) {
                guard case .rename(_, _, true, let inode) = record.micro[rename].kind else {
                    continue
                }
                durable.formUnion(
                    issued.filter { $0 < rename && record.micro[$0].inode == inode })
            }
        }
        let pending = issued.filter { !durable.contains($0) }
        let choices = PendingChoices(pending: pending, record: record, model: model)
        let groups =
            choices.entryOrders.map { ($0, true) }
            + (choices.blocks + choices.sizes).map { ($0, false) }
        var vectors: [[Int]] = []
        if choices.combinations <= exhaustiveLimit {
            vectors = [[]]
            for (group, _) in groups {
                vectors = vectors.flatMap { vector in (0...group.count).map { vector + [$0] } }
            }
        } else {
            let all = groups.map { $0.0.count }
            let none = groups.map { _ in 0 }
            vectors = [all, none]
            for (position, (group, _)) in groups.enumerated() {
                for choice in 0...group.count {
                    var fromAll = all
                    fromAll[position] = choice
                    var fromNone = none
                    fromNone[position] = choice
                    vectors += [fromAll, fromNone]
                }
            }
        }
        var seen = Set<FileTree>()
        var states: [CrashState] = []
        for vector in vectors {
            var chosen = Set<Int>()
            for (position, (group, isEntryOrder)) in groups.enumerated() {
                let choice = vector[position]
                if isEntryOrder {
                    chosen.formUnion(group.prefix(choice))
                } else if choice > 0 {
                    chosen.insert(group[choice - 1])
                }
            }
            // A rename in two directories persists only when both agree.
            if model == .posix {
                chosen = chosen.filter { index in
                    record.micro[index].directories.count < 2
                        || choices.entryOrders.allSatisfy { order in
                            !order.contains(index)
                                || vector[choices.entryOrders.firstIndex(of: order)!]
                                    > order.firstIndex(of: index)!
                        }
                }
            }
            guard model != .ext4 || allowedOnExt4(chosen, pending: pending) else { continue }
            let tree = materialise(durable.union(chosen), upTo: point)
            guard seen.insert(tree).inserted else { continue }
            states.append(
                CrashState(
                    crashPoint: point, tree: tree, persisted: pending.filter(chosen.contains),
                    lost: pending.filter { !chosen.contains($0) }))
        }
        return states
    }

    /// ext4's rules: ordered data (a size grows only with the data below
    /// it) and replace-via-rename (a rename over a file only with the
    /// renamed file's data).
    private func allowedOnExt4(_ chosen: Set<Int>, pending: [Int]) -> Bool {
        // The newest pending data of each block and size, and what persisted.
        func covered(inode: Int, before limit: Int, includingSizes: Bool) -> Bool {
            var newestByGroup: [[Int]: Int] = [:]
            for index in pending where index < limit {
                switch record.micro[index].kind {
                case .block(let owner, let block, _, _) where owner == inode:
                    newestByGroup[[0, block]] = index
                case .size(let owner, _, _) where owner == inode && includingSizes:
                    newestByGroup[[1, 0]] = index
                default: continue
                }
            }
            for (group, newest) in newestByGroup {
                let persisted = pending.contains { index in
                    guard chosen.contains(index), index >= newest else { return false }
                    switch record.micro[index].kind {
                    case .block(let owner, let block, _, _):
                        return owner == inode && group == [0, block]
                    case .size(let owner, _, _): return owner == inode && group == [1, 0]
                    default: return false
                    }
                }
                if !persisted { return false }
            }
            return true
        }
        for index in chosen {
            switch record.micro[index].kind {
            case .size(let inode, _, true):
                if !covered(inode: inode, before: index, includingSizes: false) { return false }
            case .rename(_, _, true, let inode):
                if !covered(inode: inode, before: index, includingSizes: true) { return false }
            default: continue
            }
        }
        return true
    }

    /// The tree that the initial directory and `included` micro-operations
    /// (issued up to call `point`) make.
    func materialise(_ included: Set<Int>, upTo point: Int) -> FileTree {
        var names = record.initialInodes
        var buffers = record.initialContents
        var sizes = record.initialContents.mapValues(\.count)
        for (index, operation) in record.micro.enumerated()
        where operation.call <= point && included.contains(index) {
            switch operation.kind {
            case .add(let path, let inode):
                names[path] = inode
                if buffers[inode] == nil {
                    buffers[inode] = []
                    sizes[inode] = 0
                }
            case .remove(let path):
                names[path] = nil
            case .rename(let from, let to, _, let inode):
                guard names[from] == inode else { continue }
                names[from] = nil
                names[to] = inode
            case .block(let inode, _, let offset, let bytes):
                var buffer = buffers[inode] ?? []
                if buffer.count < offset + bytes.count {
                    buffer += [UInt8](repeating: 0, count: offset + bytes.count - buffer.count)
                }
                buffer.replaceSubrange(offset..<offset + bytes.count, with: bytes)
                buffers[inode] = buffer
            case .size(let inode, let length, _):
                var buffer = buffers[inode] ?? []
                if length < buffer.count { buffer.removeSubrange(length...) }
                buffers[inode] = buffer
                sizes[inode] = length
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
                let buffer = buffers[inode] ?? []
                let size = sizes[inode] ?? 0
                tree.entries[path] = .file(
                    size <= buffer.count
                        ? Array(buffer[0..<size])
                        : buffer + [UInt8](repeating: 0, count: size - buffer.count))
            }
        }
        return tree
    }
}
