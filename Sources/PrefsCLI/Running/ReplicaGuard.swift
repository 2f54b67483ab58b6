import Preferences

/// The mixed-version guard (F5 in
/// Sources/Preferences/Preferences.docc/RollingOutAChange.md): a value that
/// the manifest of a running replica refuses — an older version of the
/// program still running during a roll-out, say — is refused, naming the
/// replica and its program, unless `--force`.
enum ReplicaGuard {
    /// Fails with status 3 when a live replica's declarations refuse one of
    /// `values` (by key; nil for a removal, which every manifest accepts).
    static func check(_ values: [String: PreferenceValue], storage: any PreferencesStorage)
        throws
    {
        guard !values.isEmpty else { return }
        var manifests: [String: PreferencesManifest?] = [:]
        for replica in try storage.replicas?.list() ?? [] where !replica.manifest.isEmpty {
            if manifests[replica.manifest] == nil {
                manifests[replica.manifest] = try storage.manifests?.manifest(
                    digest: replica.manifest
                ).map {
                    try PreferencesManifest(
                        jsonText: String(decoding: $0, as: UTF8.self),
                        source: "manifest \(replica.manifest)")
                }
            }
            guard let manifest = manifests[replica.manifest] ?? nil else { continue }
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                if let problem = manifest.validate(key: key, value: value) {
                    throw CommandFailure(
                        .invalidValue,
                        "\(problem.message) for replica \(replica.name) (program \(replica.program)); "
                            + "pass --force to write it anyway")
                }
            }
        }
    }
}
