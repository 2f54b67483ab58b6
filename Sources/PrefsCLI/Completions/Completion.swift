/// What a completion script offers for an option's value or a positional
/// argument.
///
/// Suites and keys are found when the user presses Tab, by running the
/// hidden `prefs completions --list suites` or `--list keys`; the other
/// kinds are written into the script.
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
