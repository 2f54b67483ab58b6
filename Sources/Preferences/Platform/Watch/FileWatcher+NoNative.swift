#if !canImport(Glibc) && !canImport(Musl) && !canImport(Darwin)
    typealias PlatformFileWatch = NoNativeFileWatch

    /// A platform with neither inotify nor kqueue: ``FileWatcher`` polls.
    final class NoNativeFileWatch: NativeFileWatch {
        static var startsOnQueue: Bool { false }
        init() {}
        func start(for watcher: FileWatcher) -> Bool { false }
        func stop(_ id: ObjectIdentifier) {}
        var descriptor: Int32? { nil }
    }
#endif
