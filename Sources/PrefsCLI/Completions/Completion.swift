/// What a shell completion script should offer for an option's value or a
/// positional argument; declared with each option and argument.
enum Completion: Sendable, Equatable {
    /// Free text: nothing to offer.
    case nothing
    /// Paths, as the shell completes files.
    case files
    /// One of these words.
    case words([String])
    /// The names of the suites in the default store directory.
    case suites
    /// The keys of the manifest in force and the stored keys.
    case keys
    /// The names of `prefs`'s commands.
    case commands
}
