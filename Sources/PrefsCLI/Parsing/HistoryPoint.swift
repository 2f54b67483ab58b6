import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A point in a store's history as `log --since` and `restore --to` take
/// it: a change's sequence number (`412`), or an ISO 8601 time
/// (`2026-12-02T03:12:09Z`, `2026-12-02T03:12:09.120Z`).
enum HistoryPoint: Sendable, Equatable {
    case sequence(Int64)
    case time(Date)

    /// How help and errors name the two forms.
    static let forms = "a sequence number or an ISO 8601 time such as 2026-12-02T03:12:09Z"

    /// `text` as a sequence number when it is one, else as a time; nil
    /// when it is neither.
    init?(_ text: String) {
        if let sequence = Self.sequence(text) {
            self = .sequence(sequence)
        } else if let date = Self.time(text) {
            self = .time(date)
        } else {
            return nil
        }
    }

    /// The point given to `option`, or a usage error of `command` naming it.
    static func parse(
        _ text: String, option: OptionSpec, command: any PrefsCommand.Type
    ) throws(CommandFailure) -> HistoryPoint {
        guard let point = HistoryPoint(text) else {
            throw .usage("invalid \(option.name) '\(text)' (use \(forms))", usage: command)
        }
        return point
    }

    /// Decimal digits that fit an `Int64`: a sequence number (0 is the
    /// state before any change).
    static func sequence(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(text)
    }

    /// An ISO 8601 time, read as the library reads dates (`set --type date`
    /// takes the same texts), so that it compares exactly with the times of
    /// history entries.
    static func time(_ text: String) -> Date? {
        // The library's normal form: UTC, `2026-12-02T03:12:09.12Z`, with
        // as few fractional digits as give the same Date back.
        guard case .string(let normal)? = try? PreferenceValueType.date.parse(text, forKey: ""),
            normal.hasSuffix("Z")
        else { return nil }
        return ISO8601.parse(normal)
    }
}
