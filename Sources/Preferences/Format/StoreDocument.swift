/// The preferences file layout (SPEC §5): a JSON object with the layout's
/// `format` (1), the app's data `version` (0 when absent) and the stored
/// `values`.
///
/// ```json
/// {
///   "format" : 1,
///   "values" : {
///     "dark_mode" : true
///   },
///   "version" : 2
/// }
/// ```
struct StoreDocument: Sendable, Equatable {
    static let currentFormat: Int64 = 1

    var values: [String: PreferenceValue]
    var version: Int

    init(values: [String: PreferenceValue] = [:], version: Int = 0) {
        self.values = values
        self.version = version
    }

    /// Reads a file's bytes; every problem is ``PreferencesError/corrupted(file:reason:)``.
    static func decode(_ bytes: [UInt8], file: String, limits: PreferencesLimits) throws
        -> StoreDocument
    {
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.corrupted(
                file: file,
                reason: "file is \(bytes.count) bytes, over the limit of \(limits.maxFileSize)")
        }
        if bytes.isEmpty {
            throw PreferencesError.corrupted(file: file, reason: "the file is empty")
        }
        let root: PreferenceValue
        do {
            // The envelope and `values` add two levels above the stored values.
            root = try JSONText.parse(bytes, source: file, maxDepth: limits.maxDepth + 2)
        } catch PreferencesError.corrupted(_, let reason) {
            throw PreferencesError.corrupted(file: file, reason: "not valid JSON: \(reason)")
        }
        guard case .object(let fields) = root else {
            throw PreferencesError.corrupted(
                file: file,
                reason: "expected a JSON object at the top, found \(root.typeDescription)")
        }
        for name in fields.keys where !["format", "values", "version"].contains(name) {
            throw PreferencesError.corrupted(
                file: file, reason: "unexpected top-level field '\(name)'")
        }
        guard let format = fields["format"] else {
            throw PreferencesError.corrupted(file: file, reason: "missing the \"format\" field")
        }
        guard format == .int(currentFormat) else {
            throw PreferencesError.corrupted(
                file: file,
                reason:
                    "unknown format \(format.jsonText) (this version reads format \(currentFormat))"
            )
        }
        var version = 0
        if let stored = fields["version"] {
            guard case .int(let number) = stored, number >= 0, let value = Int(exactly: number)
            else {
                throw PreferencesError.corrupted(
                    file: file,
                    reason: "\"version\" must be a non-negative integer, found \(stored.jsonText)")
            }
            version = value
        }
        guard case .object(let values)? = fields["values"] else {
            throw PreferencesError.corrupted(
                file: file, reason: "missing the \"values\" object")
        }
        for key in values.keys {
            if let problem = limits.problem(withKey: key) {
                throw PreferencesError.corrupted(
                    file: file, reason: "stored key \(key.debugDescription.prefix(80)): \(problem)")
            }
        }
        return StoreDocument(values: values, version: version)
    }

    /// The file's bytes: pretty-printed, keys sorted, newline at the end.
    func encode(file: String, limits: PreferencesLimits) throws -> [UInt8] {
        for (key, value) in values where value.depth > limits.maxDepth {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the value of '\(key)' is nested \(value.depth) levels deep, over the limit of \(limits.maxDepth)"
            )
        }
        let root: PreferenceValue = .object([
            "format": .int(Self.currentFormat),
            "values": .object(values),
            "version": .int(Int64(version)),
        ])
        var bytes = JSONText.encodeBytes(root, pretty: true)
        bytes.append(0x0A)
        if bytes.count > limits.maxFileSize {
            throw PreferencesError.limitExceeded(
                file: file,
                reason:
                    "the new contents are \(bytes.count) bytes, over the limit of \(limits.maxFileSize)"
            )
        }
        return bytes
    }
}
