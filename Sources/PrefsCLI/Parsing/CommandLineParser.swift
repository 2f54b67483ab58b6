/// Turns the words after `prefs` into an ``Invocation``.
///
/// Rules: the first word that is not an option names the command; options
/// may come before or after it (global ones anywhere, a command's own after
/// it); a value follows its option as the next word or after `=`; a
/// command's option may also have a short name, a dash and one letter
/// (`-n` for `--max-count`), whose value is the next word or joined to it
/// (`-n 5`, `-n5`); `--` ends the options, so every later word is an
/// argument (`prefs set k -- --dash`); a word that looks like a negative
/// number (`-5`, `-0.5`) is an argument. A command's required option
/// missing, like a missing argument, and any other problem is a
/// ``CommandFailure`` with exit status 2.
struct CommandLineParser {
    let commands: [any PrefsCommand.Type]
    let globalOptions: [OptionSpec]

    /// A parser for the tool's commands and global options.
    init(
        commands: [any PrefsCommand.Type] = PrefsTool.commands,
        globalOptions: [OptionSpec] = GlobalOptions.optionSpecs
    ) {
        self.commands = commands
        self.globalOptions = globalOptions
    }

    func parse(_ words: [String]) throws(CommandFailure) -> Invocation {
        var invocation = Invocation()
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !Self.looksLikeOption(word) {
                if invocation.command == nil {
                    guard let command = commands.first(where: { $0.name == word }) else {
                        throw Self.unknown(
                            "command", word, among: commands.map { $0.name }, usage: nil)
                    }
                    invocation.command = command
                } else {
                    invocation.arguments.append(word)
                }
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            var name = word
            var attached: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                attached = String(word[word.index(after: equals)...])
            } else if let joined = Self.shortNameWithValue(word, of: invocation.command) {
                (name, attached) = joined
            }
            switch name {
            case "--help", "-h":
                invocation.wantsHelp = true
                continue
            case "--version" where invocation.command == nil:
                invocation.wantsVersion = true
                continue
            default:
                break
            }
            guard
                let spec = globalOptions.first(where: { $0.name == name })
                    ?? invocation.command?.option(named: name)
            else {
                // --version is taken only before a command.
                let own = invocation.command?.optionSpecs ?? [GlobalOptions.version]
                let names = (globalOptions + [GlobalOptions.help] + own)
                    .filter { !$0.isHidden }.map(\.name)
                throw Self.unknown("option", name, among: names, usage: invocation.command)
            }
            if !spec.takesValue {
                if attached != nil {
                    throw .usage("option '\(name)' takes no value", usage: invocation.command)
                }
                invocation.record(spec, value: nil)
                continue
            }
            if let attached {
                invocation.record(spec, value: attached)
            } else if spec.valueIsOptional {
                let next = index < words.count ? words[index] : ""
                let given = next.first?.isNumber == true
                invocation.record(spec, value: given ? next : "")
                if given { index += 1 }
            } else if index < words.count {
                invocation.record(spec, value: words[index])
                index += 1
            } else {
                throw .usage(
                    "option '\(name)' needs a value (\(spec.valueName ?? "VALUE"))",
                    usage: invocation.command)
            }
        }
        if invocation.wantsHelp || invocation.wantsVersion { return invocation }
        guard let command = invocation.command else {
            throw .usage("missing command", usage: nil)
        }
        let count = invocation.arguments.count
        let arguments = command.arguments
        if count < arguments.minimum {
            throw .usage("missing \(arguments.synopsis)", usage: command)
        }
        if let maximum = arguments.maximum, count > maximum {
            let extra = invocation.arguments[maximum]
            throw .usage("unexpected argument '\(extra)'", usage: command)
        }
        if let missing = command.optionSpecs.first(where: {
            $0.isRequired && !invocation.gave($0)
        }) {
            throw .usage("missing \(missing.synopsis)", usage: command)
        }
        return invocation
    }

    /// An unknown command or option: with the nearest of `names` when one
    /// is close (`unknown command 'sett'; did you mean 'set'?`, as `git`
    /// says it), else with the usage.
    static func unknown(
        _ kind: String, _ word: String, among names: [String],
        usage command: (any PrefsCommand.Type)?
    ) -> CommandFailure {
        let hint = NearestName.hint(for: word, among: names)
        guard hint.isEmpty else {
            return CommandFailure(.usage, "unknown \(kind) '\(word)'\(hint)")
        }
        return .usage("unknown \(kind) '\(word)'", usage: command)
    }

    /// `-n5` split into the short name and its value, when `command` has
    /// an option of that short name that takes a value.
    static func shortNameWithValue(_ word: String, of command: (any PrefsCommand.Type)?)
        -> (name: String, value: String)?
    {
        guard !word.hasPrefix("--"), word.count > 2, let command else { return nil }
        let name = String(word.prefix(2))
        guard let spec = command.option(named: name), spec.shortName == name, spec.takesValue
        else { return nil }
        return (name, String(word.dropFirst(2)))
    }

    /// `-x`, `--name`, `--name=value`; not `-`, not `-5` or `-.5`.
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let second = word[word.index(after: word.startIndex)]
        return !(second.isASCII && (second.isNumber || second == "."))
    }
}
