/// Where the processes with a store open register (F2,
/// <doc:RollingOutAChange>; ``PreferencesStorage/replicas``).
///
/// A registration lasts while the process holds it: the store closes it
/// when its last handle with live reads goes, and a process that dies
/// loses it by itself (the file backend: a lock the system releases; etcd:
/// a lease that runs out). The file backend keeps
/// `NAME.replicas.d/HOST-PID.json`; the etcd backend `KEY/replicas/HOST-PID`.
public protocol ReplicaRegistry: Sendable {
    /// Registers `replica` (this process) until the registration is
    /// closed or the process dies; a registration of the same host and pid
    /// is replaced. nil when the backend cannot register now (the file
    /// backend, while the store's directory is missing).
    func register(_ replica: PreferencesReplica) throws -> (any ReplicaRegistration)?

    /// The live registrations, sorted by host and pid.
    func list() throws -> [PreferencesReplica]

    /// Calls `onChange` when a replica registers, reports a change, or goes
    /// away; nil when the backend cannot watch that, and a waiter looks
    /// again now and then instead. Cancelling stops the calls.
    func watch(_ onChange: @escaping @Sendable () -> Void) throws -> (any StorageWatch)?
}

/// A process's registration (``ReplicaRegistry/register(_:)``), held
/// while the store is open.
public protocol ReplicaRegistration: Sendable {
    /// Records that the process has applied every change up to `sequence`
    /// (and, when it changed, the digest of its manifest).
    func update(_ replica: PreferencesReplica) throws

    /// Removes the registration; later updates do nothing. It may return
    /// before the registration is gone (a request to a cluster still on
    /// its way).
    func close()

    /// Removes the registration, as ``close()`` does, and returns once it
    /// is gone or the backend gave up on it. The default calls ``close()``.
    func closeAndWait()
}

extension ReplicaRegistration {
    public func closeAndWait() { close() }
}
