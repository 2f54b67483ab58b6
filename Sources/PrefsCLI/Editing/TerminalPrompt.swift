import Preferences

/// The question `prefs edit` asks on a terminal when the edited copy cannot
/// be written: show the problem, then `edit again? [Y/n]`.
struct TerminalPrompt: Sendable {
    let output: ToolOutput
    /// The next line the user typed, without its newline; nil at the end of input.
    var readAnswer: @Sendable () -> String? = { readLine(strippingNewline: true) }

    /// Shows `problem` as an error line and asks whether to reopen the
    /// editor until the answer is yes (`y`, `yes`, or just Return) or no
    /// (`n`, `no`, or the end of input).
    func editAgain(after problem: String) async -> Bool {
        output.error(problem)
        while true {
            output.standardError("edit again? [Y/n] ")
            guard let answer = await awaitBlocking(readAnswer) else {
                output.standardError("\n")
                return false
            }
            switch answer.trimmingWhitespace().lowercased() {
            case "", "y", "yes": return true
            case "n", "no": return false
            default: output.standardError("please answer y or n\n")
            }
        }
    }
}
