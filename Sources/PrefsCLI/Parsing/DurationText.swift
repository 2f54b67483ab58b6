/// The length of a temporary change, as `prefs set --for` takes it: one or
/// more whole numbers each followed by its unit, `h` (hours), `m`
/// (minutes) or `s` (seconds), the units in that order and each at most
/// once: `30s`, `15m`, `2h`, `1h30m`, `1h0m5s`. The whole is longer than
/// zero and at most ``maximumSeconds`` (a year).
enum DurationText {
    /// A year: longer temporary changes are ordinary ones.
    static let maximumSeconds: Int64 = 366 * 24 * 3600

    /// The grammar, for messages and help.
    static let grammar = "a whole number and a unit, h, m or s (30s, 15m, 2h, 1h30m)"

    /// The number of seconds `text` stands for, or why it is not a duration.
    static func seconds(_ text: String) -> Result<Int64, Problem> {
        let units: [(Character, Int64)] = [("h", 3600), ("m", 60), ("s", 1)]
        var total: Int64 = 0
        var digits = ""
        var nextUnit = 0
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            guard let index = units.firstIndex(where: { $0.0 == character }) else {
                return .failure(.malformed)
            }
            guard index >= nextUnit, !digits.isEmpty else { return .failure(.malformed) }
            guard let count = Int64(digits) else { return .failure(.tooLong) }
            let (part, overflow) = count.multipliedReportingOverflow(by: units[index].1)
            let (sum, overflowSum) = total.addingReportingOverflow(part)
            guard !overflow, !overflowSum, sum <= maximumSeconds else { return .failure(.tooLong) }
            total = sum
            digits = ""
            nextUnit = index + 1
        }
        guard digits.isEmpty, nextUnit > 0 else { return .failure(.malformed) }
        guard total > 0 else { return .failure(.zero) }
        return .success(total)
    }

    /// Why a text is not a duration.
    enum Problem: Error {
        case malformed, zero, tooLong

        var reason: String {
            switch self {
            case .malformed: "use \(DurationText.grammar)"
            case .zero: "a temporary change lasts longer than zero"
            case .tooLong: "a temporary change lasts at most \(maximumSeconds / 3600)h"
            }
        }
    }
}
