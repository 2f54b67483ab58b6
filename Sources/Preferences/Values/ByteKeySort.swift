/// Sorts keys by their UTF-8 bytes (which is the order of their Unicode
/// scalars), for the writers of sorted JSON objects.
///
/// The keys' bytes are kept one after another in one buffer and sorted as
/// numbers into it with a three-way radix quicksort (Bentley and Sedgewick's
/// multikey quicksort): each step looks at one byte of each key, so a
/// prefix that many keys share (`service.option.`) is read once per key
/// rather than once per comparison. Small groups finish with an insertion
/// sort that compares eight bytes at a time.
struct ByteKeySort {
    /// Every key's bytes, one after another.
    private(set) var bytes: [UInt8] = []
    /// Where each key starts in `bytes`; one more entry than keys, the last
    /// being the end of the last key.
    private(set) var starts: [Int] = [0]

    init(capacity: Int, averageLength: Int = 24) {
        bytes.reserveCapacity(capacity * averageLength)
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
        bytes.withUnsafeBufferPointer { bytes in
            starts.withUnsafeBufferPointer { starts in
                order.withUnsafeMutableBufferPointer { order in
                    var sorter = Sorter(bytes: bytes, starts: starts, order: order)
                    sorter.sort(0, order.count, depth: 0)
                }
            }
        }
        return order
    }

    private struct Sorter {
        let bytes: UnsafeBufferPointer<UInt8>
        let starts: UnsafeBufferPointer<Int>
        let order: UnsafeMutableBufferPointer<Int>
        /// A small generator for pivots, so that no input is slow on purpose.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15

        init(
            bytes: UnsafeBufferPointer<UInt8>, starts: UnsafeBufferPointer<Int>,
            order: UnsafeMutableBufferPointer<Int>
        ) {
            self.bytes = bytes
            self.starts = starts
            self.order = order
        }

        /// The byte of key `key` at `depth`, or -1 past its end.
        @inline(__always)
        func byte(_ key: Int, _ depth: Int) -> Int {
            let position = starts[key] + depth
            return position < starts[key + 1] ? Int(bytes[position]) : -1
        }

        mutating func random(below bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }

        /// Sorts `order[low..<high]`, whose keys share their first `depth` bytes.
        mutating func sort(_ low: Int, _ high: Int, depth: Int) {
            var (low, high, depth) = (low, high, depth)
            while high - low > 1 {
                if high - low <= 12 {
                    insertionSort(low, high, depth: depth)
                    return
                }
                // The median of three keys taken at random.
                let a = byte(order[low + random(below: high - low)], depth)
                let b = byte(order[low + random(below: high - low)], depth)
                let c = byte(order[low + random(below: high - low)], depth)
                let pivot = max(min(a, b), min(max(a, b), c))
                // Dijkstra's three-way partition: [low, less) below the pivot,
                // [less, index) equal to it, [greater, high) above it.
                var less = low
                var index = low
                var greater = high
                while index < greater {
                    let value = byte(order[index], depth)
                    if value < pivot {
                        order.swapAt(less, index)
                        less += 1
                        index += 1
                    } else if value > pivot {
                        greater -= 1
                        order.swapAt(index, greater)
                    } else {
                        index += 1
                    }
                }
                // Recurse into the two smaller parts and go on with the
                // largest, so that the stack stays shallow. Keys that all
                // ended at the pivot are equal: nothing to sort there.
                let equalDepth = pivot < 0 ? -1 : depth + 1
                let (belowCount, equalCount, aboveCount) = (
                    less - low, greater - less, high - greater
                )
                if equalCount >= belowCount && equalCount >= aboveCount {
                    sort(low, less, depth: depth)
                    sort(greater, high, depth: depth)
                    if equalDepth < 0 { return }
                    (low, high, depth) = (less, greater, equalDepth)
                } else if belowCount >= aboveCount {
                    sort(greater, high, depth: depth)
                    if equalDepth >= 0 { sort(less, greater, depth: equalDepth) }
                    high = less
                } else {
                    sort(low, less, depth: depth)
                    if equalDepth >= 0 { sort(less, greater, depth: equalDepth) }
                    low = greater
                }
            }
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
