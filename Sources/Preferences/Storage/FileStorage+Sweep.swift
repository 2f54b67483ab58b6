#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension FileStorage {
    /// Removes temporary files left by writers that died between creating
    /// and renaming them: the file's (`.<name>.<random>.tmp`) and its
    /// archive's, which a trim rewrites under the same lock
    /// (`.<name>.history.<random>.tmp`). Called holding the lock, when no
    /// other writer can be using one; at most once per
    /// `orphanSweepInterval`.
    func removeOrphanedTemporaryFiles(of target: String) {
        let now = ContinuousClock.now
        let due = lastSweep.withLock { last in
            if let previous = last, now - previous < orphanSweepInterval { return false }
            last = now
            return true
        }
        guard due else { return }
        let directory = Platform.parentDirectory(of: target)
        let file = "." + Platform.lastComponent(of: target) + "."
        let prefixes = [file, file + "history."]
        // Names first: only the few that look like this file's temporary
        // files are looked at, not every entry of a shared directory.
        guard let names = try? Platform.entryNames(directory) else { return }
        for name in names
        where name.hasSuffix(".tmp")
            && prefixes.contains(where: { name.hasPrefix($0) && name.count == $0.count + 12 + 4 })
        {
            let path = directory + "/" + name
            if (try? Platform.fileStamp(path))?.isRegularFile == true {
                Platform.unlinkQuietly(path)
            }
        }
    }
}
