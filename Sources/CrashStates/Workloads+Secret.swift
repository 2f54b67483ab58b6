import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A store that others could read takes a secret: from that write on its
/// file is its owner's only.
extension Workload {
    static let secretText = "s3cr3t-token-for-the-crash-explorer"
    static let token = PreferenceKey<String>("token", default: "", secret: true)

    static let secret = Workload(
        name: "secret", summary: "a secret set in a store others could read",
        before: ["a": .int(1)],
        steps: [Step(changes: ["token": .string(secretText)], acknowledgedBy: 1)],
        secretKeys: ["token"],
        setup: { directory in
            try await openPlain(directory).set(key("a"), 1)
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o644], ofItemAtPath: directory + "/prefs.json")
        },
        run: { directory in
            let store = try await openPlain(directory)
            await store.declare(try PreferencesManifest(keys: [token]))
            try await store.set(token, secretText)
            acknowledge()
        },
        checkBeforeOpening: { directory, _ in
            secretsReadableByOthers(in: directory)
        })

    /// Every file below `directory` that holds the secret and that its
    /// group or others may read.
    static func secretsReadableByOthers(in directory: String) -> [Violation] {
        guard let tree = try? FileTree.read(directory) else { return [] }
        let secret = Array(secretText.utf8)
        var violations: [Violation] = []
        for (path, entry) in tree.entries.sorted(by: { $0.key < $1.key }) {
            guard let bytes = entry.bytes, let mode = tree.modes[path], mode & 0o077 != 0,
                bytes.firstRange(of: secret) != nil
            else { continue }
            violations.append(
                Violation(
                    invariant: Violation.secretPrivate,
                    detail: "\(path) holds the secret with mode \(String(mode, radix: 8))"))
        }
        return violations
    }
}
