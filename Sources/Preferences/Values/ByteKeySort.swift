/// Sorts keys by their UTF-8 bytes (which is the order of their Unicode
/// scalars), for the writers of sorted JSON objects.
///
/// The keys' bytes are kept one after another in one buffer and sorted as
/// numbers into it with a most-significant-byte-first radix sort: each pass
/// reads one byte of each key and moves the keys to their byte's bucket, so
/// a group of keys costs a few steps a key rather than a comparison of
/// whole keys per step; a prefix that every key of a group shares is
/// skipped eight bytes at a time. Small groups finish with an insertion
/// sort that compares eight bytes at a time.
struct ByteKeySort {
    /// Every key's bytes, one after another.
    private(set) var bytes: [UInt8] = []
    /// Where each key starts in `bytes`; one more entry than keys, the last
    /// being the end of the last key.
    private(set) var starts: [Int] = [0]

    init(capacity: Int) {
        bytes.reserveCapacity(capacity * 24)
        starts.reserveCapacity(capacity + 1)
    }

    var count: Int { starts.count - 1 }

    /// Adds a key; it is key number `count - 1`.
    mutating func append(_ key: String) {
        let copied = key.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == nil { bytes.append(contentsOf: key.utf8) }
        starts.append(bytes.count)
    }

    /// The bytes of key number `index`.
    func withKey<Result>(
        _ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result {
        try bytes.withUnsafeBufferPointer { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[starts[index]..<starts[index + 1]]))
        }
    }

    /// The key numbers in the order of their bytes (a key that is a prefix
    /// of another comes first; equal keys keep no particular order).
    func sortedOrder() -> [Int] {
        var order = Array(0..<count)
        guard order.count > 1 else { return order }
        var scratch = order
        bytes.withUnsafeBufferPointer { bytes in
            starts.withUnsafeBufferPointer { starts in
                order.withUnsafeMutableBufferPointer { order in
                    scratch.withUnsafeMutableBufferPointer { scratch in
                        Sorter(bytes: bytes, starts: starts, order: order, scratch: scratch)
                            .sort(0, order.count, depth: 0)
                    }
                }
            }
        }
        return order
    }

    private struct Sorter {
        let bytes: UnsafeBufferPointer<UInt8>
        let starts: UnsafeBufferPointer<Int>
        let order: UnsafeMutableBufferPointer<Int>
        /// Room to move a group's key numbers to their buckets.
        let scratch: UnsafeMutableBufferPointer<Int>

        /// Groups this small are sorted by insertion: a pass over 257
        /// buckets costs more.
        static let smallGroup = 24

        /// The byte of key `key` at `depth` plus one, or 0 past its end.
        @inline(__always)
        func bucket(_ key: Int, _ depth: Int) -> Int {
            let position = starts[key] + depth
            return position < starts[key + 1] ? Int(bytes[position]) + 1 : 0
        }

        /// Sorts `order[low..<high]`, whose keys share their first `depth`
        /// bytes. It recurses into every bucket but the largest, which it
        /// goes on with, so each call below has at most half the keys and
        /// the stack stays shallow.
        func sort(_ low: Int, _ high: Int, depth: Int) {
            if high - low <= Self.smallGroup {
                if high - low > 1 { insertionSort(low, high, depth: depth) }
                return
            }
            var (low, high, depth) = (low, high, depth)
            withUnsafeTemporaryAllocation(of: Int.self, capacity: 258) { counts in
                while high - low > Self.smallGroup {
                    depth += commonPrefix(low, high, from: depth)
                    counts.initialize(repeating: 0)
                    for index in low..<high { counts[bucket(order[index], depth) + 1] += 1 }
                    // Where each bucket starts.
                    for value in 1..<258 { counts[value] += counts[value - 1] }
                    for index in low..<high {
                        let key = order[index]
                        let value = bucket(key, depth)
                        scratch[low + counts[value]] = key
                        counts[value] += 1
                    }
                    // `counts[value]` is now where bucket `value` ends.
                    for index in low..<high { order[index] = scratch[index] }
                    // Keys that ended (bucket 0) are equal; the others go on
                    // with the next byte.
                    var largest = (low: low, high: low)
                    var start = low + counts[0]
                    for value in 1..<257 {
                        let end = low + counts[value]
                        if end - start > largest.high - largest.low {
                            if largest.high - largest.low > 1 {
                                sort(largest.low, largest.high, depth: depth + 1)
                            }
                            largest = (start, end)
                        } else if end - start > 1 {
                            sort(start, end, depth: depth + 1)
                        }
                        start = end
                    }
                    (low, high, depth) = (largest.low, largest.high, depth + 1)
                }
                if high - low > 1 { insertionSort(low, high, depth: depth) }
            }
        }

        /// How many bytes from `depth` on all keys of `order[low..<high]`
        /// share (the keys share their first `depth` bytes).
        private func commonPrefix(_ low: Int, _ high: Int, from depth: Int) -> Int {
            let first = order[low]
            var shared = starts[first + 1] - starts[first] - depth
            let raw = UnsafeRawBufferPointer(bytes)
            for index in (low + 1)..<high where shared > 0 {
                let key = order[index]
                let common = min(shared, starts[key + 1] - starts[key] - depth)
                let left = starts[first] + depth
                let right = starts[key] + depth
                var offset = 0
                // Eight bytes at a time while the buffer has them (bytes
                // past `common` may belong to other keys: they only bound
                // the count, which is then cut to `common`).
                while offset < common && max(left, right) + offset + 8 <= bytes.count {
                    let difference =
                        raw.loadUnaligned(fromByteOffset: left + offset, as: UInt64.self)
                        ^ raw.loadUnaligned(fromByteOffset: right + offset, as: UInt64.self)
                    if difference != 0 {
                        offset += UInt64(littleEndian: difference).trailingZeroBitCount / 8
                        break
                    }
                    offset += 8
                }
                while offset < common && max(left, right) + offset + 8 > bytes.count
                    && bytes[left + offset] == bytes[right + offset]
                {
                    offset += 1
                }
                shared = min(offset, common)
            }
            return max(shared, 0)
        }

        private func insertionSort(_ low: Int, _ high: Int, depth: Int) {
            for index in (low + 1)..<high {
                let key = order[index]
                var position = index
                while position > low && precedes(key, order[position - 1], depth: depth) {
                    order[position] = order[position - 1]
                    position -= 1
                }
                order[position] = key
            }
        }

        /// Whether key `left` comes before key `right`, both sharing their
        /// first `depth` bytes.
        @inline(__always)
        private func precedes(_ left: Int, _ right: Int, depth: Int) -> Bool {
            let leftStart = starts[left] + depth
            let rightStart = starts[right] + depth
            let leftCount = starts[left + 1] - leftStart
            let rightCount = starts[right + 1] - rightStart
            let common = min(leftCount, rightCount)
            let raw = UnsafeRawBufferPointer(bytes)
            var offset = 0
            // Eight bytes at a time: as big-endian integers they compare as
            // the bytes do.
            while offset + 8 <= common {
                let leftWord = raw.loadUnaligned(
                    fromByteOffset: leftStart + offset, as: UInt64.self
                ).bigEndian
                let rightWord = raw.loadUnaligned(
                    fromByteOffset: rightStart + offset, as: UInt64.self
                ).bigEndian
                if leftWord != rightWord { return leftWord < rightWord }
                offset += 8
            }
            while offset < common {
                let leftByte = bytes[leftStart + offset]
                let rightByte = bytes[rightStart + offset]
                if leftByte != rightByte { return leftByte < rightByte }
                offset += 1
            }
            return leftCount < rightCount
        }
    }
}
