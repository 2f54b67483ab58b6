/// The manifests of several programs sharing a store (F1,
/// <doc:RollingOutAChange>): a value is refused when any of them refuses
/// it, and two programs declaring one key with a different type or default
/// is a conflict worth reporting.
extension PreferencesManifest {
    /// Why `value` does not fit `key` in any of `manifests` (by program),
    /// naming the program; nil when every program that declares the key
    /// accepts it.
    ///
    /// ```swift
    /// PreferencesManifest.refusal(of: 25, forKey: "map_zoom", by: ["maps": manifest])?.message
    /// // "key 'map_zoom' must be at most 20, not 25 (declared by program maps)"
    /// ```
    public static func refusal(
        of value: PreferenceValue, forKey key: String, by manifests: [String: PreferencesManifest]
    ) -> PreferencesProblem? {
        for (program, manifest) in manifests.sorted(by: { $0.key < $1.key }) {
            if let problem = manifest.validate(key: key, value: value) {
                return PreferencesProblem(
                    key: key, message: problem.message + " (declared by program \(program))")
            }
        }
        return nil
    }

    /// The keys that `manifests` (by program) declare differently — another
    /// type or another default — one problem per key and pair of programs,
    /// sorted by key.
    public static func conflicts(among manifests: [String: PreferencesManifest])
        -> [PreferencesProblem]
    {
        let programs = manifests.keys.sorted()
        var problems: [PreferencesProblem] = []
        for (index, first) in programs.enumerated() {
            for second in programs[(index + 1)...] {
                let a = manifests[first]!
                let b = manifests[second]!
                for key in Set(a.entries.keys).intersection(b.entries.keys).sorted() {
                    let x = a.entries[key]!
                    let y = b.entries[key]!
                    guard x.type != y.type || x.defaultValue != y.defaultValue else { continue }
                    problems.append(
                        PreferencesProblem(
                            key: key,
                            message:
                                "key '\(key)' is declared differently by program \(first) (\(describe(x))) and program \(second) (\(describe(y)))"
                        ))
                }
            }
        }
        return problems.sorted { ($0.key ?? "") < ($1.key ?? "") }
    }

    private static func describe(_ entry: Entry) -> String {
        "\(entry.type.rawValue), default \(entry.defaultValue?.jsonText ?? "none")"
    }

    /// The manifests published beside a store, by program. One that does
    /// not parse is left out when `skippingInvalid` (a store reading what
    /// other programs declared), else it is the error (a command that would
    /// otherwise type keys differently from the service).
    package static func published(in published: any ManifestPublishing, skippingInvalid: Bool)
        throws -> [String: PreferencesManifest]
    {
        var manifests: [String: PreferencesManifest] = [:]
        for (program, bytes) in try published.programManifests() {
            do {
                manifests[program] = try PreferencesManifest(
                    jsonText: String(decoding: bytes, as: UTF8.self), source: program)
            } catch {
                if !skippingInvalid { throw error }
            }
        }
        return manifests
    }
}
