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
