#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A directory's contents: every file (with its bytes) and directory below
/// it, by path relative to it.
struct FileTree: Hashable {
    enum Entry: Hashable {
        case file([UInt8])
        case directory

        var bytes: [UInt8]? {
            if case .file(let bytes) = self { return bytes }
            return nil
        }
    }

    var entries: [String: Entry] = [:]
    /// Each file's permission bits, where they are not 0600.
    var modes: [String: UInt32] = [:]

    /// Reads the tree below `root` (symbolic links are not followed).
    static func read(_ root: String) throws -> FileTree {
        var tree = FileTree()
        let manager = FileManager.default
        var pending = [""]
        while let directory = pending.popLast() {
            let absolute = directory.isEmpty ? root : root + "/" + directory
            for name in try manager.contentsOfDirectory(atPath: absolute) {
                let path = directory.isEmpty ? name : directory + "/" + name
                let full = root + "/" + path
                guard let attributes = try? manager.attributesOfItem(atPath: full) else { continue }
                if attributes[.type] as? FileAttributeType == .typeDirectory {
                    tree.entries[path] = .directory
                    pending.append(path)
                } else {
                    tree.entries[path] = .file(
                        Array(try Data(contentsOf: URL(fileURLWithPath: full))))
                    var info = stat()
                    if lstat(full, &info) == 0, UInt32(info.st_mode) & 0o777 != 0o600 {
                        tree.modes[path] = UInt32(info.st_mode) & 0o777
                    }
                }
            }
        }
        return tree
    }

    /// Creates the tree below `root`, which must not exist yet.
    func write(to root: String) throws {
        let manager = FileManager.default
        try manager.createDirectory(
            atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (path, entry) in entries.sorted(by: { $0.key < $1.key }) {
            let full = root + "/" + path
            switch entry {
            case .directory:
                try manager.createDirectory(
                    atPath: full, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            case .file(let bytes):
                try manager.createDirectory(
                    atPath: URL(fileURLWithPath: full).deletingLastPathComponent().path,
                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                guard manager.createFile(atPath: full, contents: Data(bytes)) else {
                    throw ExplorerError("cannot create \(full)")
                }
                try manager.setAttributes(
                    [.posixPermissions: Int(modes[path] ?? 0o600)], ofItemAtPath: full)
            }
        }
    }
}

/// `path` with every symbolic link resolved (`realpath`), as the recorder
/// gives the paths of the calls it records.
func realPath(_ path: String) throws -> String {
    guard let resolved = realpath(path, nil) else {
        throw ExplorerError("cannot resolve \(path): \(String(cString: strerror(errno)))")
    }
    defer { free(resolved) }
    return String(cString: resolved)
}

struct ExplorerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
