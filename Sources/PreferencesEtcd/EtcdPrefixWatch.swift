import Dispatch
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A plain watch of every key under a prefix (the replicas,
/// ``EtcdStorage/watchReplicas(_:)``): each line of the stream — created,
/// events, cancelled — calls `onChange`, and so does every reconnection, so
/// a waiter looks again whenever something may have changed. A dropped
/// stream is opened again on the next endpoint after 100 ms. It carries no
/// documents and keeps no revision: the waiter re-reads the registrations.
final class EtcdPrefixWatch: StorageWatch, @unchecked Sendable {
    private let storage: EtcdStorage
    private let prefix: String
    private let onChange: @Sendable () -> Void
    private let queue = DispatchQueue(label: "preferences.etcd.prefix-watch")
    // Touched only on `queue`.
    private var stream: (any EtcdLineStream)?
    private var generation = 0
    private var cancelled = false

    init(storage: EtcdStorage, prefix: String, onChange: @escaping @Sendable () -> Void) {
        self.storage = storage
        self.prefix = prefix
        self.onChange = onChange
    }

    func start() {
        queue.async { self.connect() }
    }

    func cancel() {
        queue.sync {
            cancelled = true
            generation += 1
            stream?.cancel()
            stream = nil
        }
    }

    private func connect() {
        guard !cancelled else { return }
        let body: PreferenceValue = [
            "create_request": [
                "key": EtcdClient.base64(prefix),
                "range_end": EtcdClient.base64(EtcdStorage.prefixEnd(prefix)),
            ]
        ]
        let payload = Data(body.jsonText.utf8)
        generation += 1
        let current = generation
        let client = storage.client
        let endpoint = client.watchEndpoint()
        stream = client.transport(for: endpoint).openStream(
            "/v3/watch", payload, to: endpoint, token: client.token,
            connectTimeout: client.attemptTimeout,
            onLine: { _ in
                self.queue.async {
                    if current == self.generation { self.onChange() }
                }
            },
            onEnd: { _ in
                self.queue.async {
                    guard current == self.generation, !self.cancelled else { return }
                    client.noteFailure(of: endpoint)
                    self.stream = nil
                    self.onChange()
                    self.queue.asyncAfter(deadline: .now() + 0.1) { self.connect() }
                }
            })
    }
}
