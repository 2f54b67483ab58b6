#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `posix_spawn_file_actions_t`, whose Swift type is an optional pointer on
/// Darwin and a structure on Linux.
struct FileActions {
    #if canImport(Darwin)
        var value: posix_spawn_file_actions_t? = nil
    #else
        var value = posix_spawn_file_actions_t()
    #endif

    init() { posix_spawn_file_actions_init(&value) }

    mutating func destroy() { posix_spawn_file_actions_destroy(&value) }

    /// Opens `path` with `flags` as descriptor `target` in the child.
    mutating func open(_ target: Int32, _ path: String, _ flags: Int32) {
        posix_spawn_file_actions_addopen(&value, target, path, flags, 0o644)
    }

    /// Makes the child's `target` a copy of this process's `descriptor`.
    mutating func duplicate(_ descriptor: Int32, to target: Int32) {
        posix_spawn_file_actions_adddup2(&value, descriptor, target)
    }

    /// Closes every descriptor above standard error in the child, after the
    /// actions added before: Darwin's `POSIX_SPAWN_CLOEXEC_DEFAULT` (set by
    /// ``Attributes``) with standard input, output and error kept; glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later); or,
    /// with an older C library, a close for each descriptor listed in
    /// `/proc/self/fd` now (one another thread opens meanwhile without
    /// `O_CLOEXEC` could still pass; the library opens all of its own with
    /// it).
    mutating func closeInheritedDescriptors() {
        #if canImport(Darwin)
            for descriptor in Int32(0)...2 {
                posix_spawn_file_actions_addinherit_np(&value, descriptor)
            }
        #else
            if let closeFrom = Self.closeFrom {
                _ = closeFrom(&value, 3)
            } else {
                for descriptor in openDescriptors() where descriptor > 2 {
                    posix_spawn_file_actions_addclose(&value, descriptor)
                }
            }
        #endif
    }

    #if !canImport(Darwin)
        private typealias CloseFrom =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

        /// glibc's `posix_spawn_file_actions_addclosefrom_np`, which Swift's
        /// Glibc module does not declare; nil where the C library has none.
        private static let closeFrom: CloseFrom? = {
            let name = "posix_spawn_file_actions_addclosefrom_np"
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                return nil
            }
            return unsafeBitCast(symbol, to: CloseFrom.self)
        }()

        /// The descriptors this process has open, from `/proc/self/fd`
        /// (empty without it).
        private func openDescriptors() -> [Int32] {
            guard let directory = opendir("/proc/self/fd") else { return [] }
            defer { closedir(directory) }
            let listing = dirfd(directory)
            var descriptors: [Int32] = []
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                    String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                if let descriptor = Int32(name), descriptor != listing {
                    descriptors.append(descriptor)
                }
            }
            return descriptors
        }
    #endif
}

/// `posix_spawnattr_t`: every signal unblocked in the child, and SIGINT,
/// SIGQUIT, SIGTERM and SIGPIPE at their default actions (and, on Darwin,
/// every descriptor closed but those the file actions keep).
struct Attributes {
    #if canImport(Darwin)
        var value: posix_spawnattr_t? = nil
    #else
        var value = posix_spawnattr_t()
    #endif

    init() {
        posix_spawnattr_init(&value)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        #if canImport(Darwin)
            flags |= POSIX_SPAWN_CLOEXEC_DEFAULT
        #endif
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGQUIT, SIGTERM, SIGPIPE] { sigaddset(&defaults, number) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&value, &defaults)
        posix_spawnattr_setsigmask(&value, &unblocked)
        posix_spawnattr_setflags(&value, Int16(flags))
    }

    mutating func destroy() { posix_spawnattr_destroy(&value) }
}
