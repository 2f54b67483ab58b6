import Preferences

/// `prefs edit`: the stored values in `$VISUAL`, else `$EDITOR`, else `vi`,
/// merged back three ways ("Editing in an editor" in
/// Sources/Preferences/Preferences.docc/CommandLineTool.md).
///
/// The editor gets a copy, one JSON object of key → value with sorted keys,
/// in a new private directory; the store is not locked while it runs. On
/// save, a key changed only in the copy is written, a key changed only in
/// the store meanwhile stays as the store has it, and a key changed on both
/// sides is a conflict: nothing is written, status 3. A copy that is not
/// JSON or holds a value the manifest refuses is shown as an error; on a
/// terminal the editor can be reopened, otherwise status 3. An editor that
/// fails is status 5. Whenever nothing was written the copy is kept and its
/// path printed. Under `sudo`, the editor runs as the invoking user on a
/// copy that user owns (``EditSession``, ``EditorCommand``).
struct EditCommand: PrefsCommand {
    typealias Context = EditContext

    static let name = "edit"
    static let help = CommandHelp(
        summary: "Change the stored values in an editor.",
        discussion: """
            Opens $VISUAL, else $EDITOR, else vi, on a copy of the stored values: \
            one JSON object of key → value with sorted keys, in a new private \
            directory (mode 0700, the copy 0600). The variable is a shell command \
            line, as git takes it ('code --wait' works); the copy's path is its \
            last argument. The keys the key manifest declares that are not set \
            are listed with their types, defaults and descriptions on standard \
            error first: add one to the object to set it. The store is not locked \
            while the editor runs. When it exits with status 0, what the copy \
            changed is written in one change: a key changed only in the copy \
            takes its new value (removing a key removes it), a key another \
            process changed meanwhile keeps that value, and a key changed on both \
            sides is a conflict: nothing is written and the command exits with \
            status 3 naming the keys. A copy that is not valid JSON, or a value \
            the key manifest refuses, is shown; on a terminal, 'edit again? [Y/n]' \
            reopens the editor on your text, otherwise the command exits with \
            status 3. An editor that fails exits with status 5. Whenever the edit \
            is not written, the copy is kept and the error ends with its path. Prints \
            'KEY: OLD → NEW' for each key written, or 'nothing changed'. Under \
            sudo, the editor runs as the user who typed it, on a copy that user \
            owns, as sudoedit does; only reading and writing the store run as root.
            """,
        examples: [
            ("edit", "opens $VISUAL or $EDITOR (else vi) on the stored values"),
            ("--suite com.example.app edit", "edits that suite's values"),
            ("--etcd http://127.0.0.1:2379 --suite app edit", "edits a store in etcd"),
        ])

    static let wait: ValueOption<Self> = ReplicaWait.option()
    static let force = Flag<Self>(
        "--force",
        help: "Write values that another program's or a running replica's key manifest refuses.")
    static let options: [any OptionDeclaration] = [wait, force]

    let wait: Duration?
    let force: Bool

    init(_ parsed: ParsedOptions<Self>) throws(CommandFailure) {
        wait = try ReplicaWait.timeout(parsed[Self.wait])
        force = parsed[Self.force]
    }

    func run(_ context: EditContext) async throws {
        let store = try await context.store.openStore()
        let (force, programs, storage) = (force, context.store.programManifests, store.storage)
        let user = UserAccount.sudoInvoker(environment: context.environment)
        let session = EditSession(
            store: store, manifest: context.store.manifest,
            editor: EditorCommand(environment: context.environment, user: user),
            output: context.output, secrets: context.store.secrets,
            prompt: Terminal.standardInputIsTerminal ? TerminalPrompt(output: context.output) : nil,
            temporaryParent: Self.temporaryParent(context.environment, user: user),
            copyName: context.store.target.copyName,
            checkValues: { values in
                guard !force else { return }
                for key in values.keys.sortedByBytes() {
                    if let problem = PreferencesManifest.refusal(
                        of: values[key]!, forKey: key, by: programs)
                    {
                        throw CommandFailure(.invalidValue, problem.message)
                    }
                }
                try ReplicaGuard.check(values, storage: storage)
            })
        try await session.run()
        try await ReplicaWait.afterWrite(store, timeout: wait, output: context.output)
    }

    /// `$TMPDIR` when it is an absolute path, else `/tmp`; under `sudo`
    /// always `/tmp`, where the invoking user can reach the copy.
    static func temporaryParent(_ environment: [String: String], user: UserAccount?) -> String {
        guard user == nil, let directory = environment["TMPDIR"], directory.hasPrefix("/"),
            directory != "/"
        else { return "/tmp" }
        return directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    }
}
