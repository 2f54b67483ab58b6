/// The key manifests beside the file (7.6, <doc:CommandLineTool>; F1,
/// <doc:RollingOutAChange>): the store's manifest `NAME.keys.json`, and
/// `NAME.keys.d/` holding `PROGRAM.json` for each program that declared
/// keys and `versions/DIGEST.json` for each version of them, so that the
/// manifest a running replica registered is found by its digest.
extension FileStorage {
    /// `NAME.keys.json` and `NAME.keys.d/` beside the target file.
    public var manifests: (any ManifestPublishing)? { FileManifests(storage: self) }

    /// Where the store's key manifest is published: beside the target file,
    /// named as ``PreferencesManifest/publishedName(forStoreNamed:)`` says
    /// (`default.json` → `default.keys.json`).
    public var manifestPath: String {
        // Beside the link itself when the link may not be followed (S19);
        // publishing then fails with the link's error under the lock.
        let target = (try? target()) ?? path
        return Platform.parentDirectory(of: target) + "/"
            + PreferencesManifest.publishedName(forStoreNamed: Platform.lastComponent(of: target))
    }

    /// The directory of per-program manifests (`default.json` →
    /// `default.keys.d`).
    public var manifestsDirectory: String { siblingPath(suffix: ".keys.d") }
}

/// Each manifest file is replaced as the store's file is (a temporary
/// file, fsync, rename, fsync of the directory), holding `<file>.lock`,
/// and only when it holds other bytes. A new file takes the mode and owner
/// of the store's file (0600 when there is none yet), so it is readable by
/// whoever can read the store.
struct FileManifests: ManifestPublishing {
    let storage: FileStorage

    /// The manifest file, or nil when it (or its directory) does not exist;
    /// one over the size limit is ``PreferencesError/invalidManifest(file:reason:)``.
    func storeManifest() throws -> (bytes: [UInt8], location: String)? {
        let path = storage.manifestPath
        do {
            try Platform.checkLinks(path)
            return try Platform.readFile(path, limit: storage.maxFileSize).map { ($0.bytes, path) }
        } catch PreferencesError.io(_, _, let code, _) where code == Platform.notADirectory {
            return nil
        } catch PreferencesError.corrupted(_, let reason) {
            throw PreferencesError.invalidManifest(file: path, reason: reason)
        }
    }

    /// Publishes `bytes` as the store's manifest (`NAME.keys.json`), as
    /// `NAME.keys.d/PROGRAM.json` and as `NAME.keys.d/versions/DIGEST.json`.
    func publish(_ bytes: [UInt8], program: String) throws {
        try storage.withExclusiveAccess {
            try publishStoreManifest(bytes)
            let directory = storage.manifestsDirectory
            let versions = directory + "/versions"
            // Both folders are entered by name: neither may be a link the
            // caller must not follow (S19).
            try Platform.checkLinks(directory)
            try Platform.checkLinks(versions)
            let target = try storage.target()
            let owner = try storage.ownerForNewFiles(target: target)
            let created = try Platform.makeDirectories(versions, owner: owner)
            let mode = try Platform.fileStamp(target)?.mode ?? 0o600
            let digest = PreferencesManifest.digest(of: bytes)
            for path in [
                directory + "/" + Self.safeName(program) + ".json",
                versions + "/" + digest + ".json",
            ] where !holds(path, bytes) {
                _ = try Platform.replaceFile(path, with: bytes, mode: mode, owner: owner)
            }
            try storage.syncDirectory(versions)
            try storage.syncDirectory(directory)
            // A directory made here is an entry of its parent, which must
            // be synced too, or the manifests can vanish with the folder.
            for parent in Set(created.map(Platform.parentDirectory(of:))) {
                try storage.syncDirectory(parent)
            }
        }
    }

    /// `NAME.keys.json`, with the mode and owner it has, else the store file's.
    private func publishStoreManifest(_ bytes: [UInt8]) throws {
        let path = storage.manifestPath
        try Platform.checkLinks(path)
        if holds(path, bytes) { return }
        let target = try storage.target()
        let model = try Platform.fileStamp(path) ?? Platform.fileStamp(target)
        let owner = try model.map { ($0.uid, $0.gid) } ?? storage.ownerForNewFiles(target: target)
        _ = try Platform.replaceFile(path, with: bytes, mode: model?.mode ?? 0o600, owner: owner)
        try storage.syncDirectory(Platform.parentDirectory(of: path))
    }

    /// Whether the file at `path` holds `bytes`.
    private func holds(_ path: String, _ bytes: [UInt8]) -> Bool {
        (try? Platform.readFile(path, limit: storage.maxFileSize))?.bytes == bytes
    }

    /// A program's name as a file name: `[A-Za-z0-9._-]`, others as `_`,
    /// never starting with `.`.
    static func safeName(_ name: String) -> String {
        let safe = String(
            name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" }
        )
        return safe.hasPrefix(".") || safe.isEmpty ? "_" + safe : safe
    }

    /// `NAME.keys.d/PROGRAM.json` of every program, by program.
    func programManifests() throws -> [String: [UInt8]] {
        let directory = storage.manifestsDirectory
        let names: [String]
        do {
            try Platform.checkLinks(directory)
            names = try Platform.entryNames(directory)
        } catch PreferencesError.io(_, _, let code, _) where code == Platform.notFound {
            return [:]
        }
        var manifests: [String: [UInt8]] = [:]
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let path = directory + "/" + name
            try Platform.checkLinks(path)
            if let (bytes, _) = try Platform.readFile(path, limit: storage.maxFileSize) {
                manifests[String(name.dropLast(5))] = bytes
            }
        }
        return manifests
    }

    /// `NAME.keys.d/versions/DIGEST.json`, if kept.
    func manifest(digest: String) throws -> [UInt8]? {
        guard !digest.isEmpty, digest.allSatisfy(\.isHexDigit) else { return nil }
        let versions = storage.manifestsDirectory + "/versions"
        let path = versions + "/" + digest + ".json"
        for place in [storage.manifestsDirectory, versions, path] { try Platform.checkLinks(place) }
        return try Platform.readFile(path, limit: storage.maxFileSize)?.0
    }
}
