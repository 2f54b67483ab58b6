import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The floor: a durable replace of the same bytes with nothing around it —
/// temporary file, write, fsync, rename, fsync of the directory. The
/// directory is the path up to its last "/", found without Foundation's path
/// functions (which cost tens of microseconds a call), so the floor is only
/// the system calls.
enum FloorWriter {
    static func replace(_ bytes: [UInt8], at path: String) {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { $0 == path.utf8.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let temporary = path + ".floor-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        precondition(descriptor >= 0, "cannot create \(temporary)")
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                precondition(written > 0)
                offset += written
            }
        }
        fsync(descriptor)
        close(descriptor)
        rename(temporary, path)
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        fsync(directoryDescriptor)
        close(directoryDescriptor)
    }
}
