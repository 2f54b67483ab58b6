extension String {
    /// The text without leading and trailing white space, line breaks
    /// included: the characters of Unicode's White_Space property, the set
    /// Foundation calls `.whitespacesAndNewlines`.
    package func trimmingWhitespace() -> String {
        trimming { $0.properties.isWhitespace }
    }

    /// The text without leading and trailing spaces and tabs (Unicode's
    /// space separators and U+0009, the set Foundation calls `.whitespaces`);
    /// line breaks stay.
    package func trimmingSpaces() -> String {
        trimming { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
    }

    private func trimming(_ isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
            let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}
