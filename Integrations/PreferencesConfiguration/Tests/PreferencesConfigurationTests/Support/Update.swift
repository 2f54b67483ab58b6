import Configuration

/// One element of a provider's `watchValue` updates, told apart: a value,
/// nothing stored, an error, or the end of the updates.
enum Update: Equatable, Sendable, CustomStringConvertible {
    case value(ConfigContent)
    case absent
    /// The error as printed with its details (`String(reflecting:)`).
    case failed(String)
    case ended

    /// `element` as `next()` returned it: nil is the end of the updates.
    init(_ element: Result<LookupResult, any Error>?) {
        switch element {
        case nil: self = .ended
        case .success(let result)?: self = result.value.map { .value($0.content) } ?? .absent
        case .failure(let error)?: self = .failed(String(reflecting: error))
        }
    }

    var description: String {
        switch self {
        case .value(let content): "\(content)"
        case .absent: "absent"
        case .failed(let error): "failed: \(error)"
        case .ended: "ended"
        }
    }
}
