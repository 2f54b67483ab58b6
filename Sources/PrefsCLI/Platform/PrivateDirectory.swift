import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new directory of one's own for the copy `prefs edit` hands an editor:
/// an unpredictable name, mode 0700, and under `sudo` owned by the user
/// who typed it (with the copy inside), as `sudoedit` does.
///
/// The directory is opened once when it is made, and every later access
/// goes through that descriptor, never the path: should its owner rename
/// it, or put a link in its place, `prefs` still reads and removes only
/// inside the directory it made. Reading the copy back, it refuses anything
/// but a regular file of the expected owner with one link: root never
/// reads a file the user merely points at.
final class PrivateDirectory: Sendable {
    /// The directory's path, for the editor and for messages.
    let path: String
    /// Who owns the directory and its files: the editing user under `sudo`,
    /// nil for this process's own user.
    let owner: UserAccount?
    private let descriptor: Int32

    /// Makes `parent/prefix.XXXXXX`; under `sudo` it is given to `owner`
    /// by ``handOver()``, once its files are in it.
    init(in parent: String, prefix: String, owner: UserAccount?) throws {
        var template = Array("\(parent)/\(prefix).XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else {
            throw Self.ioError("create a directory in", parent)
        }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let opened = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else {
            let error = Self.ioError("open directory", path)
            rmdir(path)
            throw error
        }
        descriptor = opened
        self.owner = owner
    }

    deinit { close(descriptor) }

    /// The path of the file `name` in the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// Creates the file `name` with `bytes`, mode 0600, owned by ``owner``.
    func create(_ name: String, containing bytes: [UInt8]) throws {
        let file = openat(
            descriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(0o600))
        guard file >= 0 else { throw Self.ioError("create", self.file(name)) }
        defer { close(file) }
        // open(2) applied the umask: make the mode exact.
        guard fchmod(file, mode_t(0o600)) == 0 else { throw Self.ioError("chmod", self.file(name)) }
        if let owner, fchown(file, uid_t(owner.uid), gid_t(owner.gid)) != 0 {
            throw Self.ioError("give \(owner.name)", self.file(name))
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                write(file, $0.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("write", self.file(name))
            }
            offset += written
        }
    }

    /// Gives the directory itself to ``owner`` (mode 0700 either way).
    func handOver() throws {
        guard fchmod(descriptor, mode_t(0o700)) == 0 else { throw Self.ioError("chmod", path) }
        if let owner, fchown(descriptor, uid_t(owner.uid), gid_t(owner.gid)) != 0 {
            throw Self.ioError("give \(owner.name)", path)
        }
    }

    /// The bytes of the file `name`: a regular file with one link, owned
    /// by ``owner`` (or this process's user), of at most `limit` bytes.
    func read(_ name: String, limit: Int) throws -> [UInt8] {
        let shown = file(name)
        let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { throw Self.ioError("open", shown) }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0 else { throw Self.ioError("stat", shown) }
        let expected = owner?.uid ?? UInt32(geteuid())
        guard (info.st_mode & S_IFMT) == S_IFREG, UInt32(info.st_uid) == expected,
            info.st_nlink == 1
        else {
            throw PreferencesError.io(
                operation: "read", path: shown, code: EPERM,
                message: "not a regular file of its own owned by uid \(expected)")
        }
        guard Int(info.st_size) <= limit else {
            throw PreferencesError.io(
                operation: "read", path: shown, code: EFBIG,
                message: "\(info.st_size) bytes, over the limit of \(limit)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(file, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("read", shown)
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit {
                throw PreferencesError.io(
                    operation: "read", path: shown, code: EFBIG,
                    message: "over the limit of \(limit) bytes")
            }
        }
    }

    /// Removes everything but directories in the directory (the copy, an
    /// editor's swap or backup files), then the directory if it is empty.
    func remove() {
        let listing = dup(descriptor)
        if listing >= 0, let stream = fdopendir(listing) {
            var names: [String] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(stream)
            for name in names { unlinkat(descriptor, name, 0) }
        } else if listing >= 0 {
            close(listing)
        }
        // A path someone put in its place is not removed: rmdir follows no
        // link, and a directory of theirs holding files stays.
        rmdir(path)
    }

    private static func ioError(_ operation: String, _ path: String) -> PreferencesError {
        let code = errno
        return .io(
            operation: operation, path: path, code: code, message: String(cString: strerror(code)))
    }
}

/// `read(2)`, which the methods named `read` here would otherwise hide.
private func systemRead(_ file: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.read(file, buffer, count)
    #else
        Darwin.read(file, buffer, count)
    #endif
}
