import Preferences

/// One `prefs edit`: the stored values as a copy in a private directory,
/// the editor on it, and what it changed merged back in one change.
///
/// The store is read once, when the session starts, and written once, in
/// one `store.edit` (under the store's lock, atomically, one history entry
/// attributed to `edit`), after the editor has exited: never locked while
/// the editor runs. The copy is pure JSON, one object of key → value with
/// sorted keys; the keys the manifest declares that are not set are listed
/// on standard error before the editor opens instead.
///
/// The copy and its directory are removed when the edit is written or
/// changed nothing, and kept (its path in the error) whenever it was not
/// written: an editor that failed, a copy refused without a terminal to
/// ask on, a conflict, a write that failed.
struct EditSession {
    let store: PreferencesStore
    let manifest: PreferencesManifest?
    let editor: EditorCommand
    let output: ToolOutput
    /// How the changes printed show secret values.
    let secrets: SecretRedaction
    /// Asks whether to reopen the editor on a refused copy; nil when
    /// standard input is not a terminal.
    let prompt: TerminalPrompt?
    /// Where the private directory is made.
    let temporaryParent: String
    /// The copy's file name.
    let copyName: String
    /// Checks the new values beyond the manifest (other programs' and the
    /// running replicas' manifests); throws a ``CommandFailure`` to refuse.
    var checkValues: @Sendable ([String: PreferenceValue]) throws -> Void = { _ in }

    /// What one save of the copy came to.
    private enum Attempt {
        /// The values are the ones shown.
        case unchanged
        /// These changes were written (none: the store already held them).
        case written([String: ThreeWayMerge.Change])
        /// The copy cannot be written: not JSON, not an object, a value the
        /// manifest or the store refuses.
        case refused(String)
    }

    /// Both sides changed these keys.
    private struct Conflict: Error {
        let keys: [String]
    }

    func run() async throws {
        let base = store.snapshot.values
        if let note = Self.unsetKeysNote(manifest, stored: base) { output.standardError(note) }
        let shown = Array(try PreferencesExport(base, as: .json).text.utf8)
        let directory = try PrivateDirectory(
            in: temporaryParent, prefix: "prefs-edit", owner: editor.user)
        let copy = directory.file(copyName)
        do {
            try directory.create(copyName, containing: shown)
            try directory.handOver()
        } catch {
            directory.remove()
            throw error
        }
        while true {
            let ending: ForegroundProcess.Ending
            do {
                ending = try await editor.run(editing: copy)
            } catch {
                directory.remove()
                throw error
            }
            guard ending == .exited(0) else {
                throw Self.keeping(
                    copy, CommandFailure(.ioError, "the editor (\(editor.commandLine)) \(ending)"))
            }
            let attempt: Attempt
            do {
                let bytes = try directory.read(
                    copyName, limit: PreferencesLimits().maxFileSize)
                attempt = try await self.attempt(bytes, shown: shown, base: base)
            } catch let conflict as Conflict {
                let keys = conflict.keys.map { "'\($0)'" }.joined(separator: ", ")
                throw Self.keeping(
                    copy,
                    CommandFailure(
                        .invalidValue,
                        "these keys changed both in your edit and in the store meanwhile: \(keys)"
                    ))
            } catch {
                throw Self.keeping(copy, CommandFailure(error))
            }
            switch attempt {
            case .unchanged:
                output.print("nothing changed")
            case .written(let changes) where changes.isEmpty:
                output.print("nothing changed: the store already holds the edited values")
            case .written(let changes):
                output.standardOutput(
                    changes.keys.sortedByBytes().map { key in
                        let change = changes[key]!
                        let old = secrets.text(change.old, forKey: key)
                        return "\(key): \(old) → \(secrets.text(change.new, forKey: key))\n"
                    }.joined())
            case .refused(let problem):
                if let prompt {
                    if await prompt.editAgain(after: problem) { continue }
                    throw CommandFailure(
                        .invalidValue, "nothing was written; your edit is kept in \(copy)")
                }
                throw Self.keeping(copy, CommandFailure(.invalidValue, problem))
            }
            directory.remove()
            return
        }
    }

    /// Checks the saved copy and writes what it changed.
    private func attempt(_ bytes: [UInt8], shown: [UInt8], base: [String: PreferenceValue])
        async throws -> Attempt
    {
        if bytes == shown { return .unchanged }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .refused("the edited copy is not valid UTF-8")
        }
        let parsed: PreferenceValue
        do {
            parsed = try PreferenceValue(jsonText: text, source: copyName)
        } catch PreferencesError.corrupted(_, let reason) {
            return .refused("the edited copy is not valid JSON: \(reason)")
        }
        guard case .object(let edited) = parsed else {
            return .refused(
                "the edited copy must be one JSON object of key → value, not \(parsed.typeDescription)"
            )
        }
        // A message that quotes a secret's edited value shows <redacted>.
        for (key, value) in edited { secrets.remember(value, forKey: key) }
        let merge = ThreeWayMerge(base: base, edited: edited)
        if merge.changes.isEmpty { return .unchanged }
        let problems = merge.changes.keys.sortedByBytes().compactMap { key in
            merge.changes[key]?.new.flatMap { manifest?.validate(key: key, value: $0)?.message }
        }
        if !problems.isEmpty { return .refused(problems.joined(separator: "; ")) }
        do {
            try checkValues(merge.changes.compactMapValues(\.new))
        } catch let failure as CommandFailure {
            return .refused(failure.message)
        }
        do {
            return .written(
                try await store.edit { preferences in
                    // Decided on the values stored now, under the store's lock.
                    switch merge.outcome(current: preferences.values) {
                    case .conflict(let keys):
                        throw Conflict(keys: keys)
                    case .apply(let changes):
                        preferences.attribute(to: "edit")
                        for (key, change) in changes { preferences[raw: key] = change.new }
                        return changes
                    }
                })
        } catch let error as PreferencesError {
            switch error {
            case .invalidKey, .invalidValue, .limitExceeded, .typeMismatch:
                return .refused(error.description)
            default:
                throw error
            }
        }
    }

    /// `failure` with the copy's path: nothing was written, and the edit
    /// is kept there.
    private static func keeping(_ copy: String, _ failure: CommandFailure) -> CommandFailure {
        CommandFailure(
            failure.status,
            "\(failure.message); nothing was written; your edit is kept in \(copy)")
    }

    /// The keys `manifest` declares that are not stored, one a line with
    /// their type, default and description, under a line that says so; nil
    /// when there are none.
    ///
    /// ```
    /// keys the manifest declares that are not set (add one to the object to set it):
    ///   language: string = "en"  # Interface language
    /// ```
    static func unsetKeysNote(_ manifest: PreferencesManifest?, stored: [String: PreferenceValue])
        -> String?
    {
        guard let manifest else { return nil }
        let unset = manifest.entries.keys.filter { stored[$0] == nil }.sortedByBytes()
        guard !unset.isEmpty else { return nil }
        var lines = [
            "keys the manifest declares that are not set (add one to the object to set it):"
        ]
        for key in unset {
            guard let entry = manifest[key] else { continue }
            var line = "  \(key): \(entry.type.rawValue)"
            if let value = entry.defaultValue { line += " = \(value.jsonText)" }
            if let help = entry.help, !help.isEmpty { line += "  # \(help)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
