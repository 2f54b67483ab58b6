/// The file backend's history archive: `<file>.history` beside the store's
/// file, one entry of JSON a line, oldest first (<doc:HistoryAndUndo>).
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

    func readEntries() throws -> [[UInt8]] {
        let path = try storage.target() + ".history"
        guard let (bytes, _) = try Platform.readFile(path, limit: 1 << 30, followingSymlinks: false)
        else { return [] }
        return Self.lines(bytes)
    }

    func append(_ entries: [(sequence: Int64, text: [UInt8])], keep: HistoryLimit) throws {
        try storage.withExclusiveAccess {
            let target = try storage.target()
            let path = target + ".history"
            var last: Int64 = 0
            var first: Int64?
            var size = 0
            var cut: Int?
            if let (tail, fileSize) = try Platform.readPart(path, count: 64 << 10, fromEnd: true) {
                size = fileSize
                // A last line without its newline is the torn end of an
                // append that did not finish: cut it off.
                let end = tail.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
                if end < tail.count { cut = fileSize - (tail.count - end) }
                let complete = Self.lines(Array(tail[0..<end]))
                last = complete.last.flatMap(Self.sequence) ?? 0
                if tail.count == fileSize { first = complete.first.flatMap(Self.sequence) }
            }
            let fresh = entries.filter { $0.sequence > last }
            if fresh.isEmpty && cut == nil { return }
            var added: [UInt8] = []
            for entry in fresh {
                added += entry.text
                added.append(0x0A)
            }
            if first == nil, size > 0,
                let (head, _) = try Platform.readPart(path, count: 4096, fromEnd: false)
            {
                first = Self.lines(head).first.flatMap(Self.sequence)
            }
            let newLast = fresh.last?.sequence ?? last
            let count = first.map { newLast - $0 + 1 } ?? Int64(fresh.count)
            let model = try Platform.fileStamp(path) ?? Platform.fileStamp(target)
            let owner =
                try model.map { ($0.uid, $0.gid) } ?? storage.ownerForNewFiles(target: target)
            let mode = model?.mode ?? 0o600
            if Self.overflows(entries: count, bytes: (cut ?? size) + added.count, keep: keep) {
                try rewrite(path, adding: fresh, keep: keep, mode: mode, owner: owner)
                return
            }
            let created = try Platform.append(
                added, to: path, cuttingTo: cut, mode: mode, owner: owner)
            if created { try storage.syncDirectory(Platform.parentDirectory(of: path)) }
        }
    }

    /// Replaces the archive with its newest entries within `keep`,
    /// `fresh` included.
    private func rewrite(
        _ path: String, adding fresh: [(sequence: Int64, text: [UInt8])], keep: HistoryLimit,
        mode: UInt32, owner: (uid: UInt32, gid: UInt32)?
    ) throws {
        var lines: [(sequence: Int64, text: [UInt8])] = []
        if let (bytes, _) = try Platform.readFile(path, limit: 1 << 30, followingSymlinks: false) {
            for line in Self.lines(bytes) {
                if let sequence = Self.sequence(line) { lines.append((sequence, line)) }
            }
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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total + lines.count - start)
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
