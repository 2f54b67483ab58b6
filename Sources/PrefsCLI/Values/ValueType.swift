/// The types `prefs set --type` accepts.
enum ValueType: String, CaseIterable, Sendable {
    case bool, int, double, string, json, date, data

    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
