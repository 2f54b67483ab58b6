import Foundation
import PreferencesTestSupport
import Testing

@testable import PrefsCLI

/// `prefs help --man`, the manual page: written from the same command table
/// as `prefs --help`, and rendered by groff, as `man` renders it, with every
/// warning on.
@Suite(.scaledTimeLimit(minutes: 10)) struct CLIManualPageTests {
    static let groff = CompletionShells.find("groff")

    let workspace: TemporaryDirectory

    init() throws {
        workspace = try TemporaryDirectory()
    }

    /// The page `prefs help --man` prints, and what groff makes of it
    /// (plain text, no bold or underline), checked to render with no
    /// warning.
    func renderedPage(sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (markup: String, text: String)
    {
        let groff = try #require(Self.groff)
        let output = try await runChild("prefs", ["help", "--man"])
        #expect(output.status == 0, sourceLocation: sourceLocation)
        #expect(output.standardError == "", sourceLocation: sourceLocation)
        let page = workspace.file("prefs.1")
        try write(output.standardOutput, to: page)
        let rendered = try await runProgram(
            groff, ["-man", "-Tutf8", "-ww", "-P-cbou", page.path],
            environment: ["PATH": CompletionShells.searchPath.joined(separator: ":")])
        #expect(rendered.status == 0, sourceLocation: sourceLocation)
        #expect(rendered.standardError == "", "groff warned", sourceLocation: sourceLocation)
        return (output.standardOutput, rendered.standardOutput)
    }

    /// `text` with every run of white space made one space, and the minus
    /// sign groff prints for `\-` made a hyphen-minus again.
    static func flattened(_ text: String) -> String {
        text.replacingOccurrences(of: "\u{2212}", with: "-")
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Whether the rendered `section` has an indented paragraph tagged
    /// `tag`: a line indented seven columns that is the tag, or the tag and
    /// the paragraph's text beside it (where the tag is short).
    static func has(_ tag: String, in text: String, section: String) -> Bool {
        guard let start = text.range(of: "\n\(section)\n") else { return false }
        for line in text[start.upperBound...].split(separator: "\n") {
            if let first = line.first, !first.isWhitespace { return false }
            let indented = "       " + tag
            if line == indented || line.hasPrefix(indented + " ") { return true }
        }
        return false
    }

    @Test(.enabled(if: groff != nil, "groff is not installed"))
    func everyCommandHasASectionWithItsUsageAndOptions() async throws {
        let (_, text) = try await renderedPage()
        let flat = Self.flattened(text)
        for command in PrefsTool.commands {
            // A subsection heading is a line of its own, indented three columns.
            #expect(text.contains("\n   \(command.name)\n"), "no section for '\(command.name)'")
            #expect(flat.contains(command.usage), "no usage line for '\(command.name)'")
            for option in command.optionSpecs where !option.isHidden {
                #expect(
                    flat.contains(option.helpSynopsis + " " + Self.flattened(option.help)),
                    "'\(command.name)' lacks \(option.name)")
            }
        }
        for option in GlobalOptions.optionSpecs {
            #expect(flat.contains(option.helpSynopsis + " " + Self.flattened(option.help)))
        }
        #expect(!flat.contains("--man "), "the hidden flag is not documented")
    }

    @Test(.enabled(if: groff != nil, "groff is not installed"))
    func thePageHasTheSectionsAnAdministratorLooksFor() async throws {
        let (markup, text) = try await renderedPage()
        #expect(markup.hasPrefix(".TH \"PREFS\" \"1\" \"\" \"prefs 0."))
        // man-db's whatis line: the name, \-, a description.
        #expect(markup.contains(".SH \"NAME\"\nprefs \\- read and change"))
        for heading in [
            "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "GLOBAL OPTIONS", "EXIT STATUS",
            "ENVIRONMENT", "FILES", "EXAMPLES",
        ] {
            #expect(text.contains("\n\(heading)\n"), "no \(heading)")
        }
        for status in 0...6 {
            #expect(Self.has("\(status)", in: text, section: "EXIT STATUS"))
        }
        for variable in [
            "PREFS_HOME", "XDG_CONFIG_HOME", "HOME", "PREFS_MANIFEST", "PREFS_ETCD_ENDPOINTS",
            "PREFS_ETCD_USER", "PREFS_ETCD_PASSWORD", "VISUAL, EDITOR", "TMPDIR", "SUDO_USER",
            "PREFS_SYSTEM_HOME",
        ] {
            #expect(
                Self.has(variable, in: text, section: "ENVIRONMENT"), "\(variable) is not described"
            )
        }
        #expect(
            Self.has("/var/lib/prefs/NAME/NAME.json", in: text, section: "FILES"),
            "the system scope's file is not listed")
        let flat = Self.flattened(text)
        for step in ["get", "set", "log", "revert", "watch"] {
            #expect(flat.contains("prefs --suite com.example.app \(step) "), "no \(step) example")
        }
    }

    @Test func theManualPageTakesNoCommandAndIsLeftOutOfHelp() async throws {
        let output = try await runChild("prefs", ["help", "--man", "get"])
        #expect(output.status == 2)
        #expect(output.standardOutput == "")
        #expect(
            output.standardError
                == "prefs: error: unexpected argument 'get' (--man prints the whole page); usage: prefs help [COMMAND] (see 'prefs help --help')\n"
        )
        let help = try await runChild("prefs", ["help", "--help"])
        #expect(!help.standardOutput.contains("--man "))
    }

    @Test func escapingKeepsTextAsWritten() {
        #expect(
            ManualText.escaped(#"'a' -> b\c ~ "d" → …, {"x":1,"y":2}"#)
                == #"\(aqa\(aq \-> b\ec \(ti "d" \[u2192] \[u2026], {"x":1,\:"y":2}"#)
        var page = ManualText()
        page.text(".starts with a dot")
        page.text("  'quoted' after spaces")
        #expect(page.markup == "\\&.starts with a dot\n\\(aqquoted\\(aq after spaces\n")
        #expect(
            ManualText.styled("prefs log [KEY ...] [-n N] [--since SEQ|TIME]")
                == #"\fBprefs\fR \fBlog\fR [\fIKEY\fR ...] [\fB\-n\fR \fIN\fR] [\fB\-\-since\fR \fISEQ\fR|\fITIME\fR]"#
        )
    }
}
