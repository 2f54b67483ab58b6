/// What a file system may persist of the calls made before a crash.
///
/// Both models split a call as ``MicroOperation`` and ``DataChange`` do and
/// make durable what an fsync covered: a file's fsync its data and size
/// written before it, a directory's fsync the entries added, removed and
/// renamed in it before it. The rest is pending, and the models differ in
/// what of it a crash may leave.
enum PersistenceModel: String, CaseIterable {
    /// ALICE's abstract persistence model (`alicedefaultfs.py`), the
    /// weakest POSIX allows:
    /// - any of a directory's pending entries may be lost while later ones
    ///   persist (explored as ALICE bounds it: every prefix, all but one,
    ///   and each one alone);
    /// - a file's pending changes may persist in any order (every prefix,
    ///   and all but one), and the first one lost may persist in part, as
    ///   ``Splits`` cuts it: a write in 1 or 3 pieces or at 4 KiB
    ///   boundaries, zeros and then garbage where its data did not arrive;
    ///   a truncation piece by piece; the unlink of a file's last name
    ///   truncates it, piece by piece, before its entry goes;
    /// - a rename may persist while the renamed file's data does not.
    /// A rename itself stays atomic (ALICE takes it apart): POSIX requires
    /// it, and no scheme that replaces a file by renaming could hold if it
    /// were not.
    case posix
    /// ext4 with `data=ordered` (its default), `delalloc` and
    /// `auto_da_alloc` (defaults):
    /// - **one journal** (`Documentation/filesystems/ext4/journal.rst`):
    ///   directory operations persist in the order they were made, in all
    ///   directories together, and every fsync, of any file or directory,
    ///   commits the journal: every entry made before it is durable;
    /// - **ordered data** (`Documentation/admin-guide/ext4.rst`,
    ///   `data=ordered`): a file never grows on disk before the data below
    ///   its new size, so a write persists in part only as a prefix of its
    ///   4 KiB blocks, never with zeros or garbage; a truncation and an
    ///   unlink are journalled whole;
    /// - **replace-via-rename** (`auto_da_alloc` in `ext4.rst`): a rename
    ///   over an existing file persists only with the renamed file's data
    ///   written before it.
    /// Data written with delayed allocation is not in the journal until it
    /// is allocated, so an fsync of one file does not make another's data
    /// durable.
    case ext4
}

/// The pending micro-operations of one crash point, grouped into the
/// choices a crash makes independently: each group lists the sets of its
/// micro-operations that may persist together (its options), the first
/// none of them and the second all.
struct PendingChoices {
    /// A directory's pending entries (POSIX), or all of them (ext4).
    var entryGroups: [[Set<Int>]] = []
    /// The directories of each entry group (POSIX).
    var entryDirectories: [String] = []
    /// A file's pending changes.
    var dataGroups: [[Set<Int>]] = []

    var groups: [[Set<Int>]] { entryGroups + dataGroups }

    /// Files with more pending changes than this (a lock file's
    /// generation, written on every write and never synced) are explored
    /// around their first and last change only.
    static let manyChanges = 4

    /// `partsPerChange`: at most this many of each change's parts are
    /// explored, spread evenly over them (``CrashStateBuilder/quick``); nil
    /// explores every part.
    init(
        entries: [Int], changes: [DataChange], record: BrokenRecord, model: PersistenceModel,
        partsPerChange: Int? = nil
    ) {
        switch model {
        case .posix:
            var byDirectory: [String: [Int]] = [:]
            for index in entries {
                for directory in record.micro[index].directories {
                    byDirectory[directory, default: []].append(index)
                }
            }
            entryDirectories = byDirectory.keys.sorted()
            entryGroups = entryDirectories.map { Self.subsets(of: byDirectory[$0]!) }
        case .ext4:
            if !entries.isEmpty {
                entryGroups = [(0...entries.count).map { Set(entries.prefix($0)) }]
                entryGroups[0].swapAt(1, entries.count)
            }
        }
        var byInode: [Int: [DataChange]] = [:]
        for change in changes { byInode[change.inode, default: []].append(change) }
        dataGroups = byInode.keys.sorted().map {
            Self.options(
                of: byInode[$0]!, ordered: model == .ext4, partsPerChange: partsPerChange)
        }
    }

    /// ALICE's bound on the subsets of `entries` (in order) that persist:
    /// every prefix, all but one, and each one alone.
    static func subsets(of entries: [Int]) -> [Set<Int>] {
        var options: [Set<Int>] = [[], Set(entries)]
        for count in 1..<max(1, entries.count) { options.append(Set(entries.prefix(count))) }
        if entries.count > 1 {
            for index in entries.indices {
                var allButOne = entries
                allButOne.remove(at: index)
                options.append(Set(allButOne))
                options.append([entries[index]])
            }
        }
        return unique(options)
    }

    /// What may persist of one file's pending changes: every prefix of
    /// them, each with the next change in part, and all but one.
    static func options(of changes: [DataChange], ordered: Bool, partsPerChange: Int? = nil)
        -> [Set<Int>]
    {
        let wholes = changes.map { Set($0.whole) }
        func union(_ indices: some Sequence<Int>) -> Set<Int> {
            indices.reduce(into: Set<Int>()) { $0.formUnion(wholes[$1]) }
        }
        let count = changes.count
        let explored =
            count > manyChanges
            ? Array(Set([0, 1, count - 2, count - 1])).sorted() : Array(0..<count)
        var options: [Set<Int>] = [[], union(0..<count)]
        for index in explored {
            let before = union(0..<index)
            options.append(before.union(wholes[index]))
            let parts = ordered ? changes[index].orderedParts : changes[index].parts
            for part in spread(parts, atMost: partsPerChange) {
                options.append(before.union(part))
            }
            if count > 1 { options.append(union((0..<count).filter { $0 != index })) }
        }
        return unique(options)
    }

    /// At most `limit` of `parts`, evenly spread from the first to the
    /// last (all of them when `limit` is nil or not less than their count).
    static func spread(_ parts: [[Int]], atMost limit: Int?) -> [[Int]] {
        guard let limit, limit > 1, parts.count > limit else { return parts }
        return (0..<limit).map { parts[$0 * (parts.count - 1) / (limit - 1)] }
    }

    static func unique(_ options: [Set<Int>]) -> [Set<Int>] {
        var seen = Set<Set<Int>>()
        return options.filter { seen.insert($0).inserted }
    }

    /// How many combinations there are, before the bound is applied.
    var combinations: Int {
        var count = 1
        for group in groups {
            count = count.multipliedReportingOverflow(by: group.count).partialValue
            if count > 1 << 30 { return count }
        }
        return count
    }
}
