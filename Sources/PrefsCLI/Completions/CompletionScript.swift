/// What the completion scripts are written from: ``PrefsTool/commands``
/// and ``GlobalOptions``, so a new command or option appears in every
/// script without an edit here.
enum CompletionScript {
    /// The script for `shell`.
    static func text(for shell: CompletionsCommand.Shell) -> String {
        switch shell {
        case .bash: BashCompletionScript.text
        case .zsh: ZshCompletionScript.text
        case .fish: FishCompletionScript.text
        }
    }

    /// The arguments that make `prefs` print the suites to offer, one per line.
    static let listSuites = list(.suites)
    /// The arguments that make `prefs` print the keys to offer, one per
    /// line; the global options on the line go before them.
    static let listKeys = list(.keys)

    private static func list(_ list: CompletionsCommand.List) -> String {
        "\(CompletionsCommand.name) \(CompletionsCommand.list.spec.name) \(list.rawValue)"
    }

    /// Every command, in the order help lists them.
    static var commands: [any PrefsCommand.Type] { PrefsTool.commands }

    /// The commands' names.
    static var commandNames: [String] { commands.map { $0.name } }

    /// The command's own options a script offers (hidden ones are for scripts only).
    static func options(of command: any PrefsCommand.Type) -> [OptionSpec] {
        command.optionSpecs.filter { !$0.isHidden }
    }

    /// The global options, valid before and after any command.
    static var globalOptions: [OptionSpec] { GlobalOptions.optionSpecs }

    /// The names of the options that take a value, short names too, so a
    /// script knows the next word is that value and not an argument.
    static var valueOptionNames: [String] {
        var names = globalOptions.filter(\.takesValue).map(\.name)
        for command in commands {
            for option in options(of: command) where option.takesValue {
                names += option.names.filter { !names.contains($0) }
            }
        }
        return names
    }

    /// An option's value a script completes: `command` nil for a global option.
    struct ValueRule {
        let command: String?
        let option: String
        let completion: Completion
    }

    /// What each option's value completes to (under each of its names),
    /// global options first.
    static var valueRules: [ValueRule] {
        var rules = globalOptions.map {
            ValueRule(command: nil, option: $0.name, completion: $0.completion)
        }
        for command in commands {
            for option in options(of: command) {
                rules += option.names.map {
                    ValueRule(command: command.name, option: $0, completion: option.completion)
                }
            }
        }
        return rules.filter { $0.completion != .nothing }
    }

    /// An argument a script completes: the one at `position` (from 0), or
    /// with `orLater` that one and every later one (a command that takes
    /// any number).
    struct ArgumentRule {
        let command: String
        let position: Int
        let orLater: Bool
        let completion: Completion
    }

    /// What each command's arguments complete to; positions that complete
    /// to nothing are left out.
    static var argumentRules: [ArgumentRule] {
        commands.flatMap { command -> [ArgumentRule] in
            let arguments = command.arguments
            return arguments.completions.enumerated().compactMap { position, completion in
                guard completion != .nothing else { return nil }
                let last = position == arguments.completions.count - 1
                return ArgumentRule(
                    command: command.name, position: position,
                    orLater: arguments.maximum == nil && last, completion: completion)
            }
        }
    }

    /// One arm of a shell `case` statement: the patterns, and what they complete to.
    struct CaseArm {
        let patterns: [String]
        let completion: Completion
    }

    /// The arms of `case $command:$option` (`export:--format`, `*:--suite`),
    /// one per completion.
    static var valueArms: [CaseArm] {
        arms(valueRules.map { ("\($0.command ?? "*"):\($0.option)", $0.completion) })
    }

    /// The arms of `case $command:$position` (`get:0`, `watch:*`), one per
    /// completion. `cmd:*` stands for "this position or later": it comes
    /// after the fixed positions, which a `case` tries first, and a command
    /// with one gets an empty arm for each earlier position that completes
    /// to nothing, which it would otherwise catch.
    static var argumentArms: [CaseArm] {
        var fixed: [(String, Completion)] = []
        var open: [(String, Completion)] = []
        for command in commands {
            let arguments = command.arguments
            for (position, completion) in arguments.completions.enumerated() {
                if arguments.maximum == nil && position == arguments.completions.count - 1 {
                    open.append(("\(command.name):*", completion))
                } else if completion != .nothing || arguments.maximum == nil {
                    fixed.append(("\(command.name):\(position)", completion))
                }
            }
        }
        return arms(fixed) + arms(open)
    }

    /// Groups patterns by what they complete to, keeping the order in which
    /// each completion first appears.
    private static func arms(_ patterns: [(String, Completion)]) -> [CaseArm] {
        var arms: [CaseArm] = []
        for (pattern, completion) in patterns {
            if let index = arms.firstIndex(where: { $0.completion == completion }) {
                arms[index] = CaseArm(
                    patterns: arms[index].patterns + [pattern], completion: completion)
            } else {
                arms.append(CaseArm(patterns: [pattern], completion: completion))
            }
        }
        return arms
    }

    /// `text` in single quotes for bash and zsh: `it's` → `'it'\''s'`.
    static func quoted(_ text: String) -> String {
        "'" + text.replacing("'", with: #"'\''"#) + "'"
    }
}
