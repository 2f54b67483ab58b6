/// Reads a JSON object whose members are the values, as they are.
enum JSONValuesParser {
    /// Parses `bytes` as one JSON object.
    ///
    /// - Throws: ``PreferencesError/legacyFormat(file:line:column:reason:)``
    ///   with the line and column of a syntax error, or when the document is
    ///   not an object.
    static func parse(_ bytes: [UInt8], file: String) throws -> [String: PreferenceValue] {
        let value: PreferenceValue
        do {
            value = try JSONText.parse(bytes, source: file)
        } catch PreferencesError.corrupted(_, let reason) {
            // JSONText says "line L, column C: message"; keep the parts apart.
            let (line, column, message) = splitPosition(reason)
            throw PreferencesError.legacyFormat(
                file: file, line: line, column: column, reason: message)
        }
        guard case .object(let values) = value else {
            throw PreferencesError.legacyFormat(
                file: file, line: 1, column: nil,
                reason: "the document is \(value.typeDescription), not a JSON object")
        }
        return values
    }

    private static func splitPosition(_ reason: String) -> (Int?, Int?, String) {
        guard reason.hasPrefix("line "), let colon = reason.firstIndex(of: ":") else {
            return (nil, nil, reason)
        }
        let numbers = reason[..<colon].split(whereSeparator: { !$0.isNumber }).compactMap {
            Int($0)
        }
        guard numbers.count == 2 else { return (nil, nil, reason) }
        let message = reason[reason.index(after: colon)...].drop { $0 == " " }
        return (numbers[0], numbers[1], String(message))
    }
}
