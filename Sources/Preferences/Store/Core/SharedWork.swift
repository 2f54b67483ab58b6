import Dispatch

/// The threads every store in the process shares.
///
/// Each store's serial queue and the file watcher's queue target this one
/// concurrent queue, so a process with thousands of stores runs their work
/// on the few threads Dispatch gives one non-overcommitting queue (about one
/// per core, more only while some are blocked in the kernel) instead of a
/// thread per busy store.
enum SharedWork {
    static let queue = DispatchQueue(label: "preferences.shared", attributes: .concurrent)
}
