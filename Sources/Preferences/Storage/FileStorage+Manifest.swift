/// Publishing the key manifest beside the file (7.6, <doc:CommandLineTool>).
extension FileStorage {
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

    /// The manifest file, or nil when it (or its directory) does not exist;
    /// one over the size limit is ``PreferencesError/invalidManifest(file:reason:)``.
    public func publishedManifest() throws -> (bytes: [UInt8], location: String)? {
        let path = manifestPath
        do {
            return try Platform.readFile(path, limit: maxFileSize).map { ($0.bytes, path) }
        } catch PreferencesError.io(_, _, let code, _) where code == Platform.notADirectory {
            return nil
        } catch PreferencesError.corrupted(_, let reason) {
            throw PreferencesError.invalidManifest(file: path, reason: reason)
        }
    }

    /// Replaces the manifest file as the store's file is replaced (a
    /// temporary file, fsync, rename, fsync of the directory), holding
    /// `<file>.lock`; does nothing when the file already holds `bytes`.
    ///
    /// A new manifest file takes the mode and owner of the store's file
    /// (0600 when there is none yet), so it is readable by whoever can read
    /// the store.
    public func publishManifest(_ bytes: [UInt8]) throws {
        try withExclusiveAccess {
            let path = manifestPath
            if let (published, _) = try? Platform.readFile(path, limit: maxFileSize),
                published == bytes
            {
                return
            }
            let directory = Platform.parentDirectory(of: path)
            let target = try target()
            let model = try Platform.fileStamp(path) ?? Platform.fileStamp(target)
            let owner = try model.map { ($0.uid, $0.gid) } ?? ownerForNewFiles(target: target)
            _ = try Platform.replaceFile(
                path, with: bytes, mode: model?.mode ?? 0o600, owner: owner)
            try syncDirectory(directory)
        }
    }
}

/// Every program's manifest (F1, <doc:RollingOutAChange>): `NAME.keys.d/`
/// beside the store holds `PROGRAM.json` for each program that declared
/// keys, and `versions/DIGEST.json` for each version of them, so that the
/// manifest a running replica registered is found by its digest.
extension FileStorage {
    /// The directory of per-program manifests (`default.json` →
    /// `default.keys.d`).
    public var manifestsDirectory: String { siblingPath(suffix: ".keys.d") }

    /// Publishes `bytes` as the store's manifest (`NAME.keys.json`), as
    /// `NAME.keys.d/PROGRAM.json` and as `NAME.keys.d/versions/DIGEST.json`,
    /// each rewritten only when it differs.
    public func publishManifest(_ bytes: [UInt8], program: String) throws {
        try withExclusiveAccess {
            try publishManifest(bytes)
            let directory = manifestsDirectory
            let versions = directory + "/versions"
            let target = try target()
            let owner = try ownerForNewFiles(target: target)
            try Platform.makeDirectories(versions, owner: owner)
            let mode = try Platform.fileStamp(target)?.mode ?? 0o600
            let digest = PreferencesManifest.digest(of: bytes)
            for path in [
                directory + "/" + Self.safeName(program) + ".json",
                versions + "/" + digest + ".json",
            ] {
                if let (published, _) = try? Platform.readFile(path, limit: maxFileSize),
                    published == bytes
                {
                    continue
                }
                _ = try Platform.replaceFile(path, with: bytes, mode: mode, owner: owner)
            }
            try syncDirectory(versions)
            try syncDirectory(directory)
        }
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
    public func publishedManifests() throws -> [String: [UInt8]] {
        let directory = manifestsDirectory
        let names: [String]
        do {
            names = try Platform.entryNames(directory)
        } catch PreferencesError.io(_, _, let code, _) where code == Platform.notFound {
            return [:]
        }
        var manifests: [String: [UInt8]] = [:]
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            if let (bytes, _) = try Platform.readFile(directory + "/" + name, limit: maxFileSize) {
                manifests[String(name.dropLast(5))] = bytes
            }
        }
        return manifests
    }

    /// `NAME.keys.d/versions/DIGEST.json`, if kept.
    public func publishedManifest(digest: String) throws -> [UInt8]? {
        guard !digest.isEmpty, digest.allSatisfy(\.isHexDigit) else { return nil }
        return try Platform.readFile(
            manifestsDirectory + "/versions/" + digest + ".json", limit: maxFileSize)?.0
    }
}
