/// Where a backend publishes the key manifests programs declare
/// (``PreferencesStorage/manifests``): the store's manifest that `prefs`
/// reads (7.6, <doc:CommandLineTool>) and every program's, kept after it
/// exits and findable by digest (F1, <doc:RollingOutAChange>).
///
/// The file backend keeps `NAME.keys.json` beside the store and
/// `NAME.keys.d/PROGRAM.json` and `NAME.keys.d/versions/DIGEST.json`; the
/// etcd backend keeps `KEY/manifests/PROGRAM` and
/// `KEY/manifest-versions/DIGEST`. Manifests are bytes here: the backend
/// keeps and returns them whole, and never parses them.
public protocol ManifestPublishing: Sendable {
    /// Publishes `manifest` as the manifest of `program` — and, where the
    /// backend keeps one, as the store's manifest — durably, findable by
    /// its digest (``PreferencesManifest/digest(of:)``) for as long as it is
    /// kept; rewrites each place only when it holds other bytes. The store
    /// calls it on its queue when a program declares keys.
    func publish(_ manifest: [UInt8], program: String) throws

    /// The store's manifest, the last one published, and where it was read
    /// from, for messages; nil when none is published or the backend keeps
    /// only programs' manifests. One too large to read is
    /// ``PreferencesError/invalidManifest(file:reason:)``.
    func storeManifest() throws -> (bytes: [UInt8], location: String)?

    /// Every program's latest manifest, by program name.
    func programManifests() throws -> [String: [UInt8]]

    /// The manifest published with `digest`, or nil when none is kept.
    func manifest(digest: String) throws -> [UInt8]?
}
