/// What a file system may persist of the calls made before a crash.
///
/// Both models split a call as ``MicroOperation`` does and make durable
/// what an fsync covered: a file's fsync its data and size written before
/// it, a directory's fsync the entries added, removed and renamed in it
/// before it. The rest is pending, and the models differ in what of it a
/// crash may leave.
enum PersistenceModel: String, CaseIterable {
    /// The weakest model POSIX allows (ALICE's abstract model, with rename
    /// kept atomic):
    /// - a file's data written since its last fsync may be lost, or persist
    ///   only partly, block by block and in any order; a file's size may
    ///   grow without the data written there (the block reads as zeros);
    /// - a rename, create or unlink in a directory may be lost unless that
    ///   directory was fsynced after it;
    /// - a rename may persist while the renamed file's unsynced data does
    ///   not;
    /// - the operations on one directory persist in the order they were made.
    case posix
    /// ext4 with `data=ordered` (its default) and `auto_da_alloc` (default):
    /// what the POSIX model allows, less what ext4 rules out:
    /// - **ordered data** (kernel `Documentation/admin-guide/ext4.rst`,
    ///   `data=ordered`: "all data are forced directly out to the main file
    ///   system prior to its metadata being committed to the journal"): a
    ///   file's size never grows on disk before the data written below the
    ///   new size, so an append never shows zeros;
    /// - **one journal** (`Documentation/filesystems/ext4/journal.rst`:
    ///   metadata changes are committed in transactions, in order):
    ///   directory operations persist in the order they were made, in all
    ///   directories together;
    /// - **replace-via-rename** (`auto_da_alloc` in `ext4.rst`): a rename
    ///   over an existing file persists only with the renamed file's data
    ///   written before it, whether a later directory fsync or the
    ///   journal made it durable.
    case ext4
}

/// The pending micro-operations of one crash point, grouped into the
/// choices a crash makes independently.
struct PendingChoices {
    /// A directory's pending entries, in order: a prefix of them persists
    /// (per directory in the POSIX model, all directories together in ext4).
    var entryOrders: [[Int]] = []
    /// One block of one file: it persists as it stood after one of these
    /// writes, or not at all.
    var blocks: [[Int]] = []
    /// One file's size: one of these sizes persists, or none.
    var sizes: [[Int]] = []

    init(pending: [Int], record: BrokenRecord, model: PersistenceModel) {
        var byDirectory: [String: [Int]] = [:]
        var allEntries: [Int] = []
        var byBlock: [[Int]: [Int]] = [:]
        var bySize: [Int: [Int]] = [:]
        for index in pending {
            switch record.micro[index].kind {
            case .add, .remove, .rename:
                allEntries.append(index)
                for directory in record.micro[index].directories {
                    byDirectory[directory, default: []].append(index)
                }
            case .block(let inode, let block, _, _):
                byBlock[[inode, block], default: []].append(index)
            case .size(let inode, _, _): bySize[inode, default: []].append(index)
            }
        }
        switch model {
        case .posix: entryOrders = byDirectory.keys.sorted().map { byDirectory[$0]! }
        case .ext4: entryOrders = allEntries.isEmpty ? [] : [allEntries]
        }
        // A block or size written many times since its file's last fsync
        // (a lock file's generation) is explored as it stood after the
        // first and after the last of those writes: the bound that keeps
        // the states of a long workload from multiplying.
        func bounded(_ versions: [Int]) -> [Int] {
            versions.count > 2 ? [versions.first!, versions.last!] : versions
        }
        blocks = byBlock.keys.sorted { $0.lexicographicallyPrecedes($1) }.map {
            bounded(byBlock[$0]!)
        }
        sizes = bySize.keys.sorted().map { bounded(bySize[$0]!) }
    }

    /// How many combinations there are, before the model's rules and the
    /// bound are applied.
    var combinations: Int {
        var count = 1
        for group in entryOrders + blocks + sizes {
            count = count.multipliedReportingOverflow(by: group.count + 1).partialValue
            if count > 1 << 30 { return count }
        }
        return count
    }
}
