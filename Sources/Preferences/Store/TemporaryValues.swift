#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Values that hold until a time, then give way to the stored ones by
/// themselves (A4, <doc:ChangingSettingsSafely>).
///
/// The document keeps the value a key had before (in `values`) and the
/// temporary one beside it, with its end (the member `temporary`):
///
/// ```json
/// "temporary" : {
///   "log_level" : { "until" : "2026-12-02T04:00:00.000Z", "value" : "debug" }
/// }
/// ```
///
/// So no process has to be running when the time passes: every reader
/// decides by its own clock which value a key has, and the next write drops
/// the temporary values that have ended. An ordinary change of the key ends
/// its temporary value early.
struct TemporaryValues: Sendable, Equatable {
    /// One temporary value and when it ends.
    struct Override: Sendable, Equatable {
        var value: PreferenceValue
        var until: Date
    }

    var overrides: [String: Override] = [:]

    /// `date` as the document holds it, to the millisecond: the end every
    /// other reader parses, so the store that sets a value ends it at the
    /// same instant as they do, and reports the same end.
    static func storedEnd(_ date: Date) -> Date {
        ISO8601.parse(HistoryEntry.timestamp(date)) ?? date
    }

    init() {}

    /// Reads the `temporary` member; an entry that does not parse is left
    /// out (it must not cost a value).
    init(member: PreferenceValue?) {
        guard case .object(let entries)? = member else { return }
        for (key, entry) in entries {
            guard case .object(let fields) = entry, let value = fields["value"],
                case .string(let text)? = fields["until"], let until = ISO8601.parse(text)
            else { continue }
            overrides[key] = Override(value: value, until: until)
        }
    }

    /// The `temporary` member; nil when there is none.
    var member: PreferenceValue? {
        guard !overrides.isEmpty else { return nil }
        return .object(
            overrides.mapValues { override in
                [
                    "value": override.value,
                    "until": .string(HistoryEntry.timestamp(override.until)),
                ]
            })
    }

    var isEmpty: Bool { overrides.isEmpty }

    /// The temporary values that have not ended at `now`.
    func active(at now: Date) -> [String: Override] {
        overrides.filter { $0.value.until > now }
    }

    /// `stored` with the temporary values that hold at `now` in place.
    func effective(_ stored: [String: PreferenceValue], at now: Date) -> [String: PreferenceValue] {
        guard !overrides.isEmpty else { return stored }
        var values = stored
        for (key, override) in overrides where override.until > now { values[key] = override.value }
        return values
    }

    /// When the next temporary value ends, after `now`.
    func nextEnd(after now: Date) -> Date? {
        overrides.values.map(\.until).filter { $0 > now }.min()
    }
}
