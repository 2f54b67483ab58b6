#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Dates in the file are ISO 8601 UTC strings (<doc:FileFormat>).
///
/// The writer uses as few fractional digits as reproduce the `Date` exactly,
/// so a date read back equals the date written: `2026-11-29T16:11:08Z`, or
/// `2026-11-29T16:11:08.25Z`. The reader also accepts `±HH:MM` offsets and a
/// date alone (`2026-11-29`, midnight UTC).
package enum ISO8601 {
    private static let referenceOffset: Int64 = 978_307_200  // 1970 → 2001

    /// The first and last second the file format can hold: years 0000–9999.
    static let earliestSeconds: Double = -62_167_219_200
    static let latestSeconds: Double = 253_402_300_799

    /// Why `date` cannot be stored, or nil when it can.
    static func problem(with date: Date) -> String? {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= earliestSeconds, seconds < latestSeconds + 1 else {
            return
                "the date \(date.timeIntervalSince1970) s since 1970 is outside the years 0000–9999"
        }
        return nil
    }

    /// Now in UTC, to the second, without separators: `20261202T031209Z`,
    /// as the names of files and keys set aside end.
    package static func compactStamp() -> String {
        let date = format(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
        return date.filter { $0 != "-" && $0 != ":" }
    }

    /// The ISO 8601 text of `date`; only for dates ``problem(with:)`` accepts.
    static func format(_ date: Date) -> String {
        let reference = date.timeIntervalSinceReferenceDate
        guard problem(with: date) == nil else { return "1970-01-01T00:00:00Z" }
        let whole = reference.rounded(.down)
        let fraction = reference - whole
        let seconds = Int64(whole) + referenceOffset
        let stem = stemText(seconds)
        if fraction == 0 { return stem + "Z" }
        var power = 1.0
        for digits in 1...17 {
            power *= 10
            let scaled = (fraction * power).rounded()
            if scaled >= power { continue }
            var text = String(Int64(scaled))
            text = String(repeating: "0", count: digits - text.count) + text
            if let parsed = fractionValue(text), whole + parsed == reference {
                while text.hasSuffix("0") { text.removeLast() }
                return stem + "." + text + "Z"
            }
        }
        return stem + "Z"
    }

    /// `2026-11-29T16:11:08`: the UTC calendar time of whole `seconds`
    /// since 1970, the year in at least four digits (after a `-` before
    /// year 0).
    static func stemText(_ seconds: Int64) -> String {
        let parts = Platform.utcComponents(seconds)
        func pad(_ value: Int, _ width: Int) -> String {
            let text = String(abs(value))
            return (value < 0 ? "-" : "")
                + String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return
            "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))"
    }

    private static func fractionValue(_ digits: String) -> Double? {
        Double("0." + digits)
    }

    /// The date `text` denotes, or nil when it is not one of the forms above.
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D),
            let day = number(2)
        else { return nil }
        // A date alone is midnight UTC.
        if index == bytes.count {
            guard (1...12).contains(month), (1...31).contains(day) else { return nil }
            let seconds = Platform.utcSeconds(
                year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
            return Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset))
        }
        guard index < bytes.count, bytes[index] | 0x20 == 0x74 else { return nil }
        index += 1
        guard let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var fraction = 0.0
        if expect(0x2E) {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > start,
                let value = fractionValue(String(decoding: bytes[start..<index], as: UTF8.self))
            else { return nil }
            fraction = value
        }
        var offset = 0
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
        } else if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D {
            let sign = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let hours = number(2), expect(0x3A), let minutes = number(2) else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds =
            Platform.utcSeconds(
                year: year, month: month, day: day, hour: hour, minute: minute, second: second)
            - Int64(offset)
        return Date(timeIntervalSinceReferenceDate: Double(seconds - referenceOffset) + fraction)
    }
}
