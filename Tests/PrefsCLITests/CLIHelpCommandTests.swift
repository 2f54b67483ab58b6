import Foundation
import Preferences
import PreferencesTestSupport
import Testing

@testable import PrefsCLI

/// `prefs help [COMMAND]`, the version, and the one list of commands that
/// parsing and help share.
@Suite struct CLIHelpCommandTests {
    static let commands = CLIHelpTests.commands + ["help"]

    @Test func helpAloneIsTheToolsHelp() async throws {
        let help = try await runChild("prefs", ["help"])
        let flag = try await runChild("prefs", ["--help"])
        #expect(help.status == 0)
        #expect(help.standardError == "")
        #expect(help.standardOutput == flag.standardOutput)
        #expect(
            help.standardOutput.contains(
                "\n  help    Show help for prefs or for one command.\n"))
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

    @Test func theVersionIsTheLibrarysVersion() async throws {
        let output = try await runChild("prefs", ["--version"])
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
            #expect(
                !command.help.summary.isEmpty && !command.help.examples.isEmpty, "\(command.name)")
        }
    }
}
