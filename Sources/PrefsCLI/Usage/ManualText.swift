/// man(7) markup built a request or a paragraph at a time, with text
/// escaped so that the renderer prints it as written: `-` as a minus sign
/// (`\-`), `\` as `\e`, quotes, `~` and `^` as their ASCII characters,
/// every other non-ASCII character by its code point (`\[u2192]`), a
/// line that would start with a `.` guarded with `\&`, and a break point
/// (`\:`) after a comma inside a word.
struct ManualText {
    private(set) var markup = ""

    /// A request line: `.TH "PREFS" "1" …`, each argument quoted.
    mutating func request(_ name: String, _ arguments: String...) {
        let quoted = arguments.map {
            "\""
                + Self.escaped($0).split(separator: "\"", omittingEmptySubsequences: false)
                .joined(separator: "\\(dq") + "\""
        }
        markup += ([".\(name)"] + quoted).joined(separator: " ") + "\n"
    }

    mutating func section(_ name: String) { request("SH", name) }

    mutating func subsection(_ name: String) { request("SS", name) }

    mutating func paragraph() { markup += ".PP\n" }

    /// A paragraph's text, filled by the renderer.
    mutating func text(_ text: String) { line(Self.escaped(text)) }

    /// A usage line, `prefs get KEY [--json]`: options and literal words in
    /// bold, placeholders in italics.
    mutating func synopsis(_ synopsis: String) { line(Self.styled(synopsis)) }

    /// An option and its help, as an indented paragraph under its synopsis.
    mutating func tagged(_ option: OptionSpec) {
        markup += ".TP\n"
        line(Self.styled(option.helpSynopsis))
        text(option.help)
    }

    /// `tag` (in bold when `literal`), and `body` indented under it.
    mutating func tagged(_ tag: String, _ body: String, literal: Bool = true) {
        markup += ".TP\n"
        line(literal ? "\\fB" + Self.escaped(tag) + "\\fR" : Self.escaped(tag))
        text(body)
    }

    private mutating func line(_ escaped: String) {
        let trimmed = escaped.drop { $0 == " " }
        markup += (trimmed.hasPrefix(".") ? "\\&" : "") + trimmed + "\n"
    }

    /// `text` with every character the renderer would not print as itself
    /// escaped; newlines become spaces.
    static func escaped(_ text: String) -> String {
        var result = ""
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            // A comma inside a word may end a line (`\:`): a JSON object in
            // a paragraph is one long word, and the page is not hyphenated.
            if index > 0, scalars[index - 1] == ",", scalar != " " { result += "\\:" }
            switch scalar {
            case "\\": result += "\\e"
            case "-": result += "\\-"
            case "'": result += "\\(aq"
            case "`": result += "\\(ga"
            case "~": result += "\\(ti"
            case "^": result += "\\(ha"
            case "\n", "\t": result += " "
            default:
                if scalar.isASCII {
                    result.unicodeScalars.append(scalar)
                } else {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result +=
                        "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
                }
            }
        }
        return result
    }

    /// `synopsis` with `--name` and lowercase words in bold and
    /// uppercase placeholders (`KEY`, `SEQ|TIME`) in italics.
    static func styled(_ synopsis: String) -> String {
        var result = ""
        var rest = Substring(synopsis)
        var atWordStart = true
        while let first = rest.first {
            let font: String?
            let run: Substring
            if atWordStart && (first == "-" || first.isLowercase) {
                font = "B"
                run = rest.prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." }
            } else if atWordStart && first.isUppercase {
                font = "I"
                run = rest.prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
            } else {
                font = nil
                run = rest.prefix(1)
            }
            rest = rest.dropFirst(run.count)
            if let font {
                result += "\\f\(font)" + escaped(String(run)) + "\\fR"
            } else {
                result += escaped(String(run))
            }
            atWordStart = font == nil && " [|=".contains(run)
        }
        return result
    }
}
