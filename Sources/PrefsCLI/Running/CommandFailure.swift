import Preferences

/// Why a command stopped: the exit status and the one-line message that
/// follows `prefs: error: ` on standard error.
struct CommandFailure: Error, Sendable {
    let status: ExitStatus
    let message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A usage error; `usage` adds the command's synopsis to the same line.
    static func usage(_ message: String, usage command: (any PrefsCommand.Type)?) -> CommandFailure
    {
        let synopsis =
            command?.usage ?? "prefs [--file PATH | --suite NAME] [--manifest FILE] COMMAND [ARGS]"
        let help = command.map { "prefs \($0.name) --help" } ?? "prefs --help"
        return CommandFailure(.usage, "\(message); usage: \(synopsis) (see '\(help)')")
    }

    static func notSet(_ key: String) -> CommandFailure {
        CommandFailure(.keyNotSet, "key '\(key)' is not set")
    }

    /// The status a library error maps to.
    init(_ error: PreferencesError) {
        let status: ExitStatus
        switch error {
        case .io, .closed: status = .ioError
        case .corrupted, .legacyFormat, .migrationFailed, .invalidManifest: status = .corrupt
        case .typeMismatch, .invalidKey, .invalidValue, .limitExceeded, .historyUnavailable,
            .changeNotMade, .conflict:
            status = .invalidValue
        case .invalidSuiteName: status = .usage
        }
        self.init(status, error.description)
    }

    /// Any error thrown while a command ran.
    init(_ error: any Error) {
        switch error {
        case let failure as CommandFailure: self = failure
        case let error as PreferencesError: self.init(error)
        default: self.init(.ioError, "\(error)")
        }
    }
}
