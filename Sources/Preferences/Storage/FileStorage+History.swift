/// The file backend's history archive: `<file>.history` beside the store's
/// file, a line naming its history, then one entry of JSON a line, oldest
/// first (<doc:HistoryAndUndo>).
extension FileStorage {
    /// `<file>.history`, beside the target file.
    public var historyArchive: (any HistoryArchive)? { FileHistoryArchive(storage: self) }
}

/// Appends entries to `<file>.history` with one write and one fsync, under
/// the store's lock; when the file holds more than its limit, rewrites it
/// with the newest entries as the store's file is replaced (a temporary
/// file, fsync, rename, fsync of the directory).
///
/// A crash in the middle of an append leaves a last line without its end;
/// readers skip it and the next append cuts it off first. Entries are only
/// ever appended after the store committed them in its document, so the
/// archive never holds a change the document does not.
struct FileHistoryArchive: HistoryArchive {
    let storage: FileStorage

    /// How far past its limit the file may grow before it is rewritten, so
    /// that rewrites are rare: a quarter, and at least 64 entries or 16 KiB.
    static func overflows(entries: Int64, bytes: Int, keep: HistoryLimit) -> Bool {
        entries > Int64(keep.entries + max(64, keep.entries / 4))
            || bytes > keep.bytes + max(16 << 10, keep.bytes / 4)
    }

    var location: String { ((try? storage.target()) ?? storage.path) + ".history" }

    func read() throws -> ArchivedHistory {
        let path = try storage.target() + ".history"
        guard let (bytes, _) = try Platform.readFile(path, limit: 1 << 30, followingSymlinks: false)
        else { return ArchivedHistory(id: nil, entries: []) }
        var lines = Self.lines(bytes)
        let id = lines.first.flatMap(ArchivedHistory.id(inIdentityText:))
        if id != nil { lines.removeFirst() }
        return ArchivedHistory(id: id, entries: lines)
    }

    func append(
        _ entries: [(sequence: Int64, text: [UInt8])], history id: String, keep: HistoryLimit
    ) throws -> String? {
        try storage.withExclusiveAccess {
            let target = try storage.target()
            let path = target + ".history"
            // The archive is never followed as a link: its mode and owner
            // come from the file itself, or else from the store's.
            let model = try Platform.sideFileStamp(path) ?? Platform.fileStamp(target)
            let owner =
                try model.map { ($0.uid, $0.gid) } ?? storage.ownerForNewFiles(target: target)
            let mode = model?.mode ?? 0o600
            var end = try Tail(path)
            var place: String?
            let share = ArchivedHistory(id: try end.identity(path), entries: end.lines).share(
                of: id, through: entries.last?.sequence ?? 0, carrying: entries)
            if share != .all {
                place = try setAside(path, keeping: share, history: id, mode: mode, owner: owner)
                end = try Tail(path)
            }
            let fresh = entries.filter { $0.sequence > end.last }
            if fresh.isEmpty && end.cut == nil { return place }
            var added: [UInt8] = []
            // A new archive starts with the line naming its history.
            if end.size == 0 { added = ArchivedHistory.identityText(id) + [0x0A] }
            for entry in fresh {
                added += entry.text
                added.append(0x0A)
            }
            let first = try end.firstSequence(path)
            let newLast = fresh.last?.sequence ?? end.last
            let count = first.map { newLast - $0 + 1 } ?? Int64(fresh.count)
            if Self.overflows(
                entries: count, bytes: (end.cut ?? end.size) + added.count, keep: keep)
            {
                try rewrite(path, history: id, adding: fresh, keep: keep, mode: mode, owner: owner)
                return place
            }
            let created = try Platform.append(
                added, to: path, cuttingTo: end.cut, mode: mode, owner: owner)
            if created { try storage.syncDirectory(Platform.parentDirectory(of: path)) }
            return place
        }
    }

    /// Sets the archive aside at `<file>.history.<stamp>` (with a counter if
    /// taken), never over anything, and returns where. Of another history,
    /// it is moved there. Shared up to a change, it is copied there first,
    /// then replaced by its entries up to that change, so that a crash
    /// leaves the archive either as it was or as it should be.
    private func setAside(
        _ path: String, keeping share: ArchivedHistory.Share, history id: String, mode: UInt32,
        owner: (uid: UInt32, gid: UInt32)?
    ) throws -> String {
        let stamp = ISO8601.compactStamp()
        var place = path + "." + stamp
        var attempt = 1
        while Platform.exists(place) {
            attempt += 1
            place = path + "." + stamp + "-\(attempt)"
        }
        if share != .none,
            let (bytes, _) = try Platform.readFile(path, limit: 1 << 30, followingSymlinks: false)
        {
            _ = try Platform.replaceFile(place, with: bytes, mode: mode, owner: owner)
            var kept = ArchivedHistory.identityText(id) + [0x0A]
            for line in Self.lines(bytes) where Self.sequence(line).map(share.holds) ?? false {
                kept += line + [0x0A]
            }
            _ = try Platform.replaceFile(path, with: kept, mode: mode, owner: owner)
        } else {
            try Platform.rename(path, place)
        }
        try storage.syncDirectory(Platform.parentDirectory(of: path))
        return place
    }

    /// The end of the archive, as an append reads it: its last 64 KiB.
    private struct Tail {
        /// The archive's size; 0 when there is none.
        var size = 0
        /// Where a torn last line starts, to cut it off.
        var cut: Int?
        /// The complete lines read, oldest first.
        var lines: [[UInt8]] = []
        /// Whether they are the whole archive.
        var isWhole = true
        /// The last entry's sequence; 0 when none.
        var last: Int64 = 0

        init(_ path: String) throws {
            guard let (tail, fileSize) = try Platform.readPart(path, count: 64 << 10, fromEnd: true)
            else { return }
            size = fileSize
            // A last line without its newline is the torn end of an
            // append that did not finish: cut it off.
            let end = tail.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            if end < tail.count { cut = fileSize - (tail.count - end) }
            lines = FileHistoryArchive.lines(Array(tail[0..<end]))
            isWhole = tail.count == fileSize
            last = lines.last.flatMap(FileHistoryArchive.sequence) ?? 0
        }

        /// The history the archive's first line names.
        func identity(_ path: String) throws -> String? {
            try firstLines(path).first.flatMap(ArchivedHistory.id(inIdentityText:))
        }

        /// The first entry's sequence; nil when there is none.
        func firstSequence(_ path: String) throws -> Int64? {
            try firstLines(path).lazy.compactMap(FileHistoryArchive.sequence).first
        }

        /// The archive's first complete lines: those read, when they are
        /// the whole archive, or else those of its first 4 KiB.
        private func firstLines(_ path: String) throws -> [[UInt8]] {
            if isWhole { return lines }
            let head = try Platform.readPart(path, count: 4096, fromEnd: false)
            return head.map { FileHistoryArchive.lines($0.0) } ?? []
        }
    }

    /// Replaces the archive with its newest entries within `keep`,
    /// `fresh` included.
    private func rewrite(
        _ path: String, history id: String, adding fresh: [(sequence: Int64, text: [UInt8])],
        keep: HistoryLimit, mode: UInt32, owner: (uid: UInt32, gid: UInt32)?
    ) throws {
        let old = try Platform.readFile(path, limit: 1 << 30, followingSymlinks: false)?.bytes
        var lines: [(sequence: Int64, text: [UInt8])] = Self.lines(old ?? []).compactMap { line in
            Self.sequence(line).map { ($0, line) }
        }
        lines += fresh
        var start = lines.endIndex
        var total = 0
        while start > lines.startIndex, lines.endIndex - start < keep.entries {
            let size = lines[start - 1].text.count
            if total + size > keep.bytes { break }
            total += size
            start -= 1
        }
        var bytes = ArchivedHistory.identityText(id) + [0x0A]
        bytes.reserveCapacity(bytes.count + total + lines.count - start)
        for line in lines[start...] {
            bytes += line.text
            bytes.append(0x0A)
        }
        _ = try Platform.replaceFile(path, with: bytes, mode: mode, owner: owner)
        try storage.syncDirectory(Platform.parentDirectory(of: path))
    }

    /// The complete lines of `bytes` (a last line without its newline is
    /// left out), without their newlines; empty lines are skipped.
    static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = 0
        for index in bytes.indices where bytes[index] == 0x0A {
            if index > start { lines.append(Array(bytes[start..<index])) }
            start = index + 1
        }
        return lines
    }

    static func sequence(_ line: [UInt8]) -> Int64? { HistoryEntry.sequence(ofJSONText: line) }
}
