import Preferences

/// The text `prefs --help` and `prefs COMMAND --help` print, built from
/// ``PrefsTool/commands`` and ``GlobalOptions``.
enum HelpText {
    static let version = "prefs \(PreferencesVersion.current)"

    static var tool: String {
        var lines = [
            "prefs — read and change preferences stores from the shell.",
            "",
            "usage: prefs [--file PATH | --suite NAME] [--manifest FILE] COMMAND [ARGS]",
            "       prefs --etcd ENDPOINTS [--suite NAME | --key KEY] [--manifest FILE] COMMAND [ARGS]",
            "",
            "commands:",
        ]
        let width = PrefsTool.commands.map { $0.name.count }.max() ?? 0
        for command in PrefsTool.commands {
            lines.append("  " + pad(command.name, width) + "  " + command.help.summary)
        }
        lines += ["", "global options:"]
        lines += optionLines(
            GlobalOptions.optionSpecs + [GlobalOptions.help, GlobalOptions.version])
        lines += [
            "",
            "exit status: 0 ok, 1 key not set (or diff found differences),",
            "             2 usage, 3 invalid value, 4 corrupt store or legacy file,",
            "             5 I/O error, 6 --wait timed out",
            "",
            "examples:",
            "  prefs set dark_mode true",
            "  prefs get dark_mode",
            "  prefs set log_level debug --for 30m",
            "  prefs --suite com.example.app list",
            "  prefs import app.properties --format properties",
            "  prefs watch",
            "",
            "See 'prefs COMMAND --help' for one command.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    static func command(_ command: any PrefsCommand.Type) -> String {
        let help = command.help
        var lines = ["usage: " + command.usage, "", help.summary, "", wrap(help.discussion)]
        let options = command.optionSpecs.filter { !$0.isHidden }
        if !options.isEmpty {
            lines += ["", "options:"]
            lines += optionLines(options)
        }
        lines += ["", "global options:"]
        lines += optionLines(GlobalOptions.optionSpecs)
        lines += ["", "examples:"]
        for example in help.examples {
            lines.append("  prefs \(example.command)")
            lines.append("      \(example.explanation)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func optionLines(_ options: [OptionSpec]) -> [String] {
        let width = options.map(\.helpSynopsis.count).max() ?? 0
        return options.map { "  " + pad($0.helpSynopsis, width) + "  " + $0.help }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// Wraps a paragraph at 76 columns.
    private static func wrap(_ paragraph: String) -> String {
        var lines: [String] = []
        var line = ""
        for word in paragraph.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > 76 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.joined(separator: "\n")
    }
}
