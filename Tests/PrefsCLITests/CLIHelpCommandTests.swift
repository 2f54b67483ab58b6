import Foundation
import Preferences
import PreferencesTestSupport
import Testing

@testable import PrefsCLI

/// `prefs help [COMMAND]`, `prefs completions` usage, the version, and the
/// one list of commands that parsing, help and the scripts share.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIHelpCommandTests {
    static let commands = CLIHelpTests.commands + ["help", "completions"]

    @Test func helpAloneIsTheToolsHelp() async throws {
        let help = try await runChild("prefs", ["help"])
        let flag = try await runChild("prefs", ["--help"])
        #expect(help.status == 0)
        #expect(help.standardError == "")
        #expect(help.standardOutput == flag.standardOutput)
        #expect(
            help.standardOutput.contains(
                "\n  help         Show help for prefs or for one command.\n"))
        #expect(help.standardOutput.contains("\n  completions  Print a shell completion script"))
    }

    @Test(arguments: commands)
    func helpCommandIsTheCommandsHelp(command: String) async throws {
        let help = try await runChild("prefs", ["help", command])
        let flag = try await runChild("prefs", [command, "--help"])
        #expect(help.status == 0)
        #expect(help.standardError == "")
        #expect(help.standardOutput == flag.standardOutput)
        #expect(help.standardOutput.hasPrefix("usage: prefs \(command)"))
    }

    @Test func helpOfAnUnknownCommandIsAUsageError() async throws {
        let output = try await runChild("prefs", ["help", "frobnicate"])
        #expect(output.status == 2)
        #expect(output.standardOutput == "")
        #expect(
            output.standardError
                == "prefs: error: unknown command 'frobnicate'; usage: prefs help [COMMAND] (see 'prefs help --help')\n"
        )
    }

    @Test(arguments: [
        ([], "missing SHELL"),
        (["tcsh"], "unknown shell 'tcsh' (use bash, zsh or fish)"),
        (["bash", "zsh"], "unexpected argument 'zsh'"),
        (["--list", "commands"], "unknown list 'commands' (use suites or keys)"),
    ])
    func completionsNeedsOneKnownShell(arguments: [String], message: String) async throws {
        let output = try await runChild("prefs", ["completions"] + arguments)
        #expect(output.status == 2)
        #expect(output.standardOutput == "")
        #expect(
            output.standardError
                == "prefs: error: \(message); usage: prefs completions SHELL (see 'prefs completions --help')\n"
        )
    }

    @Test func theVersionIsTheLibrarysVersion() async throws {
        let output = try await runChild("prefs", ["--version"])
        #expect(output.status == 0)
        #expect(output.standardOutput == "prefs \(PreferencesVersion.current)\n")
    }

    @Test func everyCommandIsListedOnceWithOptionsOfItsOwn() {
        let names = PrefsTool.commands.map { $0.name }
        #expect(names == Self.commands)
        let global = Set(GlobalOptions.optionSpecs.map(\.name) + ["--help", "-h", "--version"])
        for command in PrefsTool.commands {
            let options = command.optionSpecs.map(\.name)
            #expect(Set(options).count == options.count, "\(command.name) repeats an option")
            #expect(global.isDisjoint(with: options), "\(command.name) shadows a global option")
            #expect(options.allSatisfy { $0.hasPrefix("--") }, "\(command.name)")
            // A short name is a dash and one letter, not -h, used once.
            let short = command.optionSpecs.compactMap(\.shortName)
            #expect(Set(short).count == short.count, "\(command.name) repeats a short name")
            #expect(
                short.allSatisfy { $0.count == 2 && $0.hasPrefix("-") && $0 != "-h" && $0 != "--" },
                "\(command.name)")
            #expect(
                !command.help.summary.isEmpty && !command.help.examples.isEmpty, "\(command.name)")
        }
    }

    @Test(arguments: CompletionsCommand.Shell.allCases)
    func everyScriptNamesEveryCommandAndOption(shell: CompletionsCommand.Shell) {
        let script = CompletionScript.text(for: shell)
        for command in PrefsTool.commands {
            #expect(script.contains(command.name), "\(shell) lacks \(command.name)")
            for option in command.optionSpecs where !option.isHidden {
                // fish names long options without their dashes (-l json).
                let name = shell == .fish ? "-l \(option.name.dropFirst(2))" : option.name
                #expect(script.contains(name), "\(shell) lacks \(command.name) \(option.name)")
                guard let short = option.shortName else { continue }
                let shortName = shell == .fish ? "-s \(short.dropFirst())" : short
                #expect(script.contains(shortName), "\(shell) lacks \(command.name) \(short)")
            }
        }
    }
}
