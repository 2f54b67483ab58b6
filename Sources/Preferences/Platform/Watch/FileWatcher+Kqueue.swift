#if canImport(Darwin)
    import Dispatch

    typealias PlatformFileWatch = KqueueFileWatch

    /// The Darwin mechanism of ``FileWatcher``: kqueue vnode sources
    /// (`DispatchSource`) on the watched directories and on the file itself,
    /// owned by the watcher (``FileWatcher/adopt(_:closing:)``), so that its
    /// ``FileWatcher/cancel()`` ends them.
    ///
    /// The only code of the file watch that no Linux build compiles.
    final class KqueueFileWatch: NativeFileWatch {
        static var startsOnQueue: Bool { true }

        /// The watched directories with the inode each had when opened.
        private let directoryInodes = Locked<[String: UInt64]>([:])
        /// The vnode source on the file itself, with the inode it watches.
        private let fileSource = Locked<(inode: UInt64, source: FileWatcher.OwnedSource)?>(nil)

        init() {}

        func start(for watcher: FileWatcher) -> Bool {
            let target = watcher.resolvedTarget()
            let directories = Set([
                Platform.parentDirectory(of: watcher.path), Platform.parentDirectory(of: target),
            ])
            var opened: [FileWatcher.OwnedSource] = []
            var inodes: [String: UInt64] = [:]
            for directory in directories {
                guard let descriptor = try? Platform.openForEvents(directory) else {
                    for owned in opened { watcher.drop(owned) }
                    return false
                }
                guard let stamp = try? Platform.fileStamp(descriptor: descriptor, path: directory)
                else {
                    Platform.closeDescriptor(descriptor)
                    for owned in opened { watcher.drop(owned) }
                    return false
                }
                inodes[directory] = stamp.inode
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .delete, .rename],
                    queue: watcher.queue)
                source.setEventHandler { [weak watcher] in
                    if let watcher { self.changed(watcher) }
                }
                opened.append(
                    watcher.adopt(source, closing: { Platform.closeDescriptor(descriptor) }))
            }
            directoryInodes.withLock { $0 = inodes }
            watcher.running.withLock { $0.target = target }
            watchFile(for: watcher)
            return true
        }

        /// Nothing to do: ``FileWatcher/cancel()`` cancels the sources it owns.
        func stop(_ id: ObjectIdentifier) {}

        var descriptor: Int32? { nil }

        /// Watches the current file (for in-place writes) if its inode changed.
        private func watchFile(for watcher: FileWatcher) {
            let target = Platform.resolveSymlinks(watcher.path)
            let inode = (try? Platform.fileStamp(target))?.inode
            let previous = fileSource.withLock { $0 }
            if let previous, previous.inode == inode { return }
            if let previous { watcher.drop(previous.source) }
            fileSource.withLock { $0 = nil }
            guard inode != nil, let descriptor = try? Platform.openForEvents(target) else { return }
            guard let stamp = try? Platform.fileStamp(descriptor: descriptor, path: target) else {
                Platform.closeDescriptor(descriptor)
                return
            }
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: descriptor,
                eventMask: [.write, .extend, .attrib, .delete, .rename],
                queue: watcher.queue)
            source.setEventHandler { [weak watcher] in
                if let watcher { self.changed(watcher) }
            }
            let owned = watcher.adopt(source, closing: { Platform.closeDescriptor(descriptor) })
            fileSource.withLock { $0 = (stamp.inode, owned) }
        }

        /// On the queue: a directory or the file reported an event.
        private func changed(_ watcher: FileWatcher) {
            if watcher.isCancelled || watcher.usesPolling { return }
            // A vnode source keeps watching a removed or moved directory's
            // old inode, which will never see the file again: poll instead
            // until the directory is back.
            let inodes = directoryInodes.withLock { $0 }
            let gone = inodes.contains { directory, inode in
                (try? Platform.fileStamp(directory))?.inode != inode
            }
            if gone {
                fileSource.withLock { $0 = nil }
                watcher.dropAllSources()
                watcher.startPolling()
                watcher.changedNowInsteadOfSoon()
                return
            }
            watchFile(for: watcher)
            // kqueue reports no close-after-write: let a burst of events settle.
            watcher.changedSoon()
        }
    }
#endif
