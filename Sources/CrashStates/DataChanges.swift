/// How a call's change to one file's bytes may persist in part, as ALICE's
/// default file system model (`alicedefaultfs.py`) splits it.
///
/// A change is cut into pieces three ways: into one piece and into three
/// ("count" splits), and at 4 KiB boundaries ("aligned"). Each piece of a
/// write past the file's end lands in three steps: the file grows with
/// zeros, the new range holds garbage, then the data. A piece inside the
/// file lands in one step, its data. A truncation shrinks piece by piece; a
/// truncation that grows the file shows garbage, then zeros. A part that
/// may persist is what a prefix of the steps leaves, and (for the count
/// splits) a prefix with one step left out. Parts that leave the same bytes
/// are one.
struct DataChange {
    /// The file.
    var inode: Int
    /// The recorded call it comes from.
    var call: Int
    /// The micro-operations of the whole change (one).
    var whole: [Int]
    /// Each part that may persist in the POSIX model: its micro-operations,
    /// applied in order.
    var parts: [[Int]]
    /// Each part that may persist on ext4 (`data=ordered`): aligned
    /// prefixes of the data, never zeros or garbage.
    var orderedParts: [[Int]]
    /// A truncation to nothing made by an unlink of the file's last name.
    var unlinking: Bool
}

/// One step of a piece: what lands where (for `.size`, the size it sets
/// is `offset`).
struct SplitStep: Hashable {
    var offset: Int
    var bytes: [UInt8]
    var fill: MicroOperation.Fill
}

enum Splits {
    /// Garbage as ALICE writes it where data did not arrive: bytes that no
    /// call wrote (a fixed pattern, so that states repeat between runs).
    static func garbage(_ count: Int, at offset: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: (offset + $0) &* 131 &+ 0x5A) | 0x80 }
    }

    /// The ranges of `start..<end` cut `way`: into `count` pieces, or at
    /// `aligned`-byte boundaries.
    static func pieces(_ start: Int, _ end: Int, count: Int?, aligned: Int?) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var position = start
        let length = end - start
        let slice = count.map { max(1, (length + $0 - 1) / $0) } ?? 0
        while position < end {
            let next: Int
            if let aligned {
                next = min(end, (position / aligned + 1) * aligned)
            } else {
                next = min(end, position + slice)
            }
            ranges.append(position..<next)
            position = next
        }
        return ranges
    }

    /// The steps of a write of `bytes` at `offset` to a file of `size`
    /// bytes, cut into `ranges`: a piece past the end grows the file with
    /// zeros, holds garbage, then its data; a piece inside holds its data.
    static func writeSteps(_ bytes: [UInt8], at offset: Int, size: Int, _ ranges: [Range<Int>])
        -> [SplitStep]
    {
        var steps: [SplitStep] = []
        for range in ranges {
            // A piece that straddles the end: its inside part, then the rest.
            let cuts =
                range.lowerBound < size && size < range.upperBound
                ? [range.lowerBound..<size, size..<range.upperBound] : [range]
            for cut in cuts {
                let data = Array(bytes[(cut.lowerBound - offset)..<(cut.upperBound - offset)])
                if cut.lowerBound >= size {
                    steps.append(
                        SplitStep(
                            offset: cut.lowerBound, bytes: [UInt8](repeating: 0, count: cut.count),
                            fill: .zeros))
                    steps.append(
                        SplitStep(
                            offset: cut.lowerBound,
                            bytes: garbage(cut.count, at: cut.lowerBound), fill: .garbage))
                }
                steps.append(SplitStep(offset: cut.lowerBound, bytes: data, fill: .data))
            }
        }
        return steps
    }

    /// The parts a write may leave: for each way of cutting it, the steps
    /// of each proper prefix, and (count splits) each prefix less one step.
    /// `ordered` keeps only aligned prefixes of data (ext4's ordered data:
    /// a file never grows on disk before the data below its new size).
    static func writeParts(_ bytes: [UInt8], at offset: Int, size: Int, ordered: Bool)
        -> [[SplitStep]]
    {
        let end = offset + bytes.count
        var parts: [[SplitStep]] = []
        let ways: [(count: Int?, aligned: Int?)] =
            ordered ? [(nil, 4096)] : [(1, nil), (3, nil), (nil, 4096)]
        for way in ways {
            var steps = writeSteps(
                bytes, at: offset, size: size,
                pieces(offset, end, count: way.count, aligned: way.aligned))
            if ordered { steps = steps.filter { $0.fill == .data } }
            guard steps.count > 1 else { continue }
            for last in 0..<(steps.count - 1) {
                parts.append(Array(steps[...last]))
                guard way.count != nil else { continue }
                for omitted in 0..<last {
                    var part = Array(steps[...last])
                    part.remove(at: omitted)
                    parts.append(part)
                }
            }
        }
        return parts
    }

    /// The sizes a truncation from `size` to `length` passes through (its
    /// steps), for each way of cutting it; a growing one shows garbage, then
    /// zeros, in each piece.
    static func truncateParts(from size: Int, to length: Int) -> [[SplitStep]] {
        guard size != length else { return [] }
        var parts: [[SplitStep]] = []
        for count in [1, 3] {
            var steps: [SplitStep] = []
            if length < size {
                // Shrinking: from the end, a third at a time.
                for range in pieces(length, size, count: count, aligned: nil).reversed() {
                    steps.append(SplitStep(offset: range.lowerBound, bytes: [], fill: .size))
                }
            } else {
                for range in pieces(size, length, count: count, aligned: nil) {
                    steps.append(
                        SplitStep(
                            offset: range.lowerBound,
                            bytes: garbage(range.count, at: range.lowerBound), fill: .garbage))
                    steps.append(
                        SplitStep(
                            offset: range.lowerBound,
                            bytes: [UInt8](repeating: 0, count: range.count), fill: .zeros))
                }
            }
            guard steps.count > 1 else { continue }
            for last in 0..<(steps.count - 1) { parts.append(Array(steps[...last])) }
        }
        return parts
    }

    /// What `steps` leave of a file that held `before`: for telling parts
    /// that leave the same bytes apart.
    static func apply(_ steps: [SplitStep], to before: [UInt8]) -> [UInt8] {
        var content = before
        for step in steps {
            if step.fill == .size {
                content.removeSubrange(min(step.offset, content.count)...)
                continue
            }
            let end = step.offset + step.bytes.count
            if content.count < end {
                content += [UInt8](repeating: 0, count: end - content.count)
            }
            content.replaceSubrange(step.offset..<end, with: step.bytes)
        }
        return content
    }
}
