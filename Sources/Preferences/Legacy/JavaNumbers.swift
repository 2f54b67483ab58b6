/// Number parsing as Java's `Integer.parseInt`, `Long.parseLong` and
/// `Float.valueOf`/`Double.valueOf` accept it, for the shared-prefs importer.
enum JavaNumbers {
    /// `Integer.parseInt`/`Long.parseLong` in radix 10: an optional sign, then
    /// one or more decimal digits (any Unicode decimal digit, as
    /// `Character.digit` allows), no trimming, within `min...max`.
    static func parseInteger(_ text: String, min: Int64, max: Int64) -> Int64? {
        var scalars = Substring(text).unicodeScalars[...]
        var negative = false
        if let first = scalars.first, first == "-" || first == "+" {
            negative = first == "-"
            scalars = scalars.dropFirst()
        }
        guard !scalars.isEmpty else { return nil }
        // Accumulate negatively, as the JDK does, so Int64.min fits.
        var value: Int64 = 0
        for scalar in scalars {
            guard scalar.properties.numericType == .decimal,
                let digitValue = scalar.properties.numericValue
            else { return nil }
            let digit = Int64(digitValue)
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = next
        }
        if negative { return value >= min ? value : nil }
        guard value != Int64.min else { return nil }
        return -value <= max ? -value : nil
    }

    /// `Double.valueOf`'s grammar (`Float.valueOf` accepts the same): white
    /// space and control characters trimmed, an optional sign, then `NaN`,
    /// `Infinity`, a decimal literal or a hexadecimal one (`0x1.8p1`), with an
    /// optional `f`/`F`/`d`/`D` suffix. Returns the value the text denotes.
    static func parseFloatingPoint(_ text: String) -> Double? {
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, first <= 0x20 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last <= 0x20 { bytes = bytes.dropLast() }
        var sign = ""
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            if first == UInt8(ascii: "-") { sign = "-" }
            bytes = bytes.dropFirst()
        }
        let rest = String(decoding: bytes, as: UTF8.self)
        if rest == "NaN" { return .nan }
        if rest == "Infinity" { return sign == "-" ? -.infinity : .infinity }
        if let last = bytes.last, "fFdD".utf8.contains(last) { bytes = bytes.dropLast() }
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        func isHexDigit(_ byte: UInt8) -> Bool {
            isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
        }
        func run(_ accept: (UInt8) -> Bool) -> String {
            let count = bytes.prefix(while: accept).count
            defer { bytes = bytes.dropFirst(count) }
            return String(decoding: bytes.prefix(count), as: UTF8.self)
        }
        let hex = bytes.count >= 2 && bytes.first == 0x30 && bytes.dropFirst().first! | 0x20 == 0x78
        if hex { bytes = bytes.dropFirst(2) }
        let integer = run(hex ? isHexDigit : isDigit)
        var fraction = ""
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fraction = run(hex ? isHexDigit : isDigit)
        }
        guard !integer.isEmpty || !fraction.isEmpty else { return nil }
        var exponent = "0"
        let marker: UInt8 = hex ? UInt8(ascii: "p") : UInt8(ascii: "e")
        if let first = bytes.first, first | 0x20 == marker {
            bytes = bytes.dropFirst()
            var exponentSign = ""
            if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
                if first == UInt8(ascii: "-") { exponentSign = "-" }
                bytes = bytes.dropFirst()
            }
            let digits = run(isDigit)
            guard !digits.isEmpty else { return nil }
            exponent = exponentSign + digits
        } else if hex {
            return nil  // a hexadecimal literal needs its binary exponent
        }
        guard bytes.isEmpty else { return nil }
        let normalized =
            sign + (hex ? "0x" : "") + (integer.isEmpty ? "0" : integer) + "."
            + (fraction.isEmpty ? "0" : fraction) + (hex ? "p" : "e") + exponent
        if let value = Double(normalized) { return value }
        // Exponents too large for Double's parser still denote a value.
        let digitsAreZero = (integer + fraction).allSatisfy { $0 == "0" }
        if digitsAreZero { return sign == "-" ? -0.0 : 0.0 }
        return exponent.hasPrefix("-")
            ? (sign == "-" ? -0.0 : 0.0) : (sign == "-" ? -.infinity : .infinity)
    }
}
