import Dispatch
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calls etcd's JSON gateway (`POST /v3/…`) synchronously, over several
/// endpoints, with authentication.
///
/// - **Blocking bridge.** The storage seam is synchronous and is called on
///   a store's serial dispatch queue, so a call blocks the calling thread
///   until the answer comes or the deadline passes: on a socket with `poll`
///   for `http://` endpoints (``SocketTransport``), and for `https://` as
///   the transport of ``EtcdConfiguration/tls`` waits (the
///   `PreferencesEtcdTLS` library's, on a semaphore that a `URLSession`
///   completion handler signals). Call it from a dispatch queue or a thread
///   of your own, never from Swift's cooperative pool.
/// - **Failover.** A call goes to the endpoint that answered last; when it
///   cannot connect, times out, answers 5xx, or says the cluster has no
///   leader, the call moves to the next endpoint, cycling with a short
///   backoff until ``EtcdConfiguration/timeout`` has passed. Then it fails
///   with `PreferencesError.io(operation:path:code:message:)` naming every
///   endpoint and what each said last.
/// - **Endpoint health.** An endpoint that failed within the last
///   ``EtcdConfiguration/timeout`` is tried only after those that did not,
///   so calls (and the watch) prefer endpoints that answered recently. With
///   several endpoints, one attempt gets at most ``attemptTimeout``, so a
///   member that accepts connections but never answers (a stopped process,
///   a machine gone without closing its sockets) costs a fraction of the
///   call's time, not all of it.
/// - **Unknown outcomes.** A request that was sent but not answered (a
///   dropped connection, a timeout, "leader changed") may still have been
///   applied. A read is simply repeated; a call that changes data is not:
///   it throws ``OutcomeUnknown`` so the caller can find out what happened
///   before it tries again.
/// - **Malformed answers.** Every answer is checked against the shape etcd
///   gives it (``EtcdReplyShape``) before a field is read. One that does
///   not fit (a field of the wrong type, a missing header) fails the call
///   at once with `PreferencesError.io(operation:path:code:message:)`
///   (`EBADMSG`) naming the endpoint and the field, never reads as an
///   absent key or a revision of 0.
/// - **Authentication.** With credentials, the first call exchanges them at
///   `/v3/auth/authenticate` for a token sent in the `Authorization` header;
///   a reply saying the token is invalid or expired makes it sign in again
///   once and repeat the call.
final class EtcdClient: Sendable {
    let configuration: EtcdConfiguration
    /// The data key, for messages.
    let subject: String
    private let plainTransport = SocketTransport()
    /// ``EtcdConfiguration/tls``'s transport; the plain one without TLS,
    /// when no endpoint is `https` (``init(configuration:subject:)`` refuses
    /// them).
    private let secureTransport: any EtcdTransport
    private let shared = Locked(Shared())

    private struct Shared {
        var preferred = 0
        /// When each endpoint last failed; nil once it answers again.
        var failedAt: [DispatchTime?] = []
        /// The token, "" when the cluster has authentication off, nil before signing in.
        var token: String?
    }

    /// A call that changes data was sent and no answer came back: it may
    /// or may not have been applied.
    struct OutcomeUnknown: Error {
        let detail: String
    }

    /// A client for `configuration`.
    ///
    /// - Throws: `PreferencesError.invalidValue(key:reason:)` for an `https`
    ///   endpoint without ``EtcdConfiguration/tls``.
    init(configuration: EtcdConfiguration, subject: String) throws {
        try configuration.checkTLS()
        self.configuration = configuration
        self.subject = subject
        secureTransport = configuration.tls?.makeTransport(configuration) ?? plainTransport
        shared.withLock {
            $0.failedAt = Array(repeating: nil, count: configuration.endpoints.count)
        }
    }

    // MARK: Endpoint health

    /// The longest one attempt on one endpoint may take: with one endpoint,
    /// the whole ``EtcdConfiguration/timeout``; with more, that timeout
    /// shared between them, but at least 1 s (an election on a loaded
    /// cluster takes about that long).
    var attemptTimeout: TimeInterval {
        let count = configuration.endpoints.count
        let timeout = configuration.timeout
        guard count > 1 else { return timeout }
        return min(timeout, max(timeout / Double(count), 1))
    }

    /// The order to try the endpoints in: from the one that answered last,
    /// round the list, with those that failed recently moved to the end.
    func endpointOrder() -> [Int] {
        let count = configuration.endpoints.count
        let recent = DispatchTime.now()
        let memory = UInt64(configuration.timeout * 1e9)
        let (preferred, failedAt) = shared.withLock { ($0.preferred, $0.failedAt) }
        let ring = (0..<count).map { (preferred + $0) % count }
        let failedRecently = { (index: Int) -> Bool in
            guard let failed = failedAt[index] else { return false }
            return recent.uptimeNanoseconds - failed.uptimeNanoseconds < memory
        }
        return ring.filter { !failedRecently($0) } + ring.filter(failedRecently)
    }

    /// The endpoint a new watch should use: the first in ``endpointOrder()``.
    func watchEndpoint() -> URL {
        configuration.endpoints[endpointOrder()[0]]
    }

    /// Remembers that `endpoint` failed (it is tried last for a while).
    func noteFailure(of endpoint: URL) {
        guard let index = configuration.endpoints.firstIndex(of: endpoint) else { return }
        shared.withLock { $0.failedAt[index] = .now() }
    }

    /// Remembers that `endpoint` answered.
    func noteAnswer(from endpoint: URL) {
        guard let index = configuration.endpoints.firstIndex(of: endpoint) else { return }
        shared.withLock { $0.failedAt[index] = nil }
    }

    /// Whether `endpoint` answers within ``attemptTimeout`` and knows a
    /// leader (`/v3/maintenance/status`, which needs no permission): nil
    /// when healthy, else what is wrong.
    func checkHealth(of endpoint: URL) -> String? {
        let answer = send(
            "/v3/maintenance/status", Data("{}".utf8), to: endpoint, token: nil,
            deadline: .now() + attemptTimeout)
        switch answer {
        case .transport(let message, _):
            return message
        case .reply(let status, let json):
            if status == 200 {
                let shape = EtcdReplyShape.answer(to: "/v3/maintenance/status")
                if let problem = shape.problem(with: json, at: "") {
                    return "malformed answer: \(problem)"
                }
                // A member id is a uint64, often past Int64.max; 0 (omitted) is none.
                return (json["leader"] ?? "0") == "0" ? "the member knows no leader" : nil
            }
            let message = Self.errorMessage(json) ?? "HTTP status \(status)"
            if case .unavailable = Self.classify(message, status: status) { return message }
            return nil
        }
    }

    /// The endpoint that answered last.
    var currentEndpoint: URL {
        configuration.endpoints[shared.withLock { $0.preferred }]
    }

    /// The token to send, signing in first when needed; nil without credentials.
    var token: String? {
        shared.withLock { $0.token }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Forgets the token so the next call signs in again.
    func invalidateToken() {
        shared.withLock { $0.token = nil }
    }

    // MARK: Calls

    /// POSTs `body` to `path` and returns the decoded reply.
    ///
    /// - Parameters:
    ///   - operation: what is being done ("read", "write"), for messages.
    ///   - idempotent: whether repeating the call after an unknown outcome is safe.
    /// - Throws: `PreferencesError.io(operation:path:code:message:)`, or
    ///   ``OutcomeUnknown`` for a non-idempotent call.
    func call(_ path: String, _ body: PreferenceValue, operation: String, idempotent: Bool)
        throws -> PreferenceValue
    {
        let payload = Data(body.jsonText.utf8)
        let endpoints = configuration.endpoints
        let start = DispatchTime.now()
        let deadline = start + configuration.timeout
        var lastSaid = [String?](repeating: nil, count: endpoints.count)
        var step = 0
        var signedInAgain = false
        let order = endpointOrder()
        while true {
            let index = order[step % endpoints.count]
            let endpoint = endpoints[index]
            let remaining = Self.seconds(from: .now(), to: deadline)
            if remaining <= 0 {
                throw unreachable(operation: operation, lastSaid: lastSaid)
            }
            // A full round without an answer: let an election finish before the next.
            if step > 0 && step % endpoints.count == 0 {
                let pause = min(0.05 * Double(1 << min(step / endpoints.count - 1, 4)), remaining)
                sleepThread(seconds: pause)
            }
            let attemptDeadline = min(deadline, .now() + attemptTimeout)
            let answer: EtcdAnswer
            do {
                let token = try signIn(at: endpoint, deadline: attemptDeadline)
                answer = send(path, payload, to: endpoint, token: token, deadline: attemptDeadline)
            } catch let failure as EndpointFailure {
                note(failure.message, for: index, in: &lastSaid)
                step += 1
                continue
            }
            switch answer {
            case .reply(let status, let json):
                if status == 200 {
                    try checkShape(of: json, from: endpoint, to: path, operation: operation)
                    shared.withLock { shared in
                        shared.preferred = index
                        shared.failedAt[index] = nil
                    }
                    return json
                }
                let message = Self.errorMessage(json) ?? "HTTP status \(status)"
                switch Self.classify(message, status: status) {
                case .invalidToken where configuration.credentials != nil && !signedInAgain:
                    signedInAgain = true
                    invalidateToken()
                case .permissionDenied:
                    throw PreferencesError.io(
                        operation: operation, path: subject, code: EACCES,
                        message:
                            "etcd user '\(configuration.credentials?.user ?? "")' is not allowed to \(operation) it at \(endpoint.absoluteString) (\(message))"
                    )
                case .unavailable(let mayHaveApplied):
                    if mayHaveApplied && !idempotent {
                        throw OutcomeUnknown(detail: "\(endpoint.absoluteString): \(message)")
                    }
                    note(message, for: index, in: &lastSaid)
                    step += 1
                case .invalidToken where configuration.credentials == nil:
                    throw PreferencesError.io(
                        operation: operation, path: subject, code: EACCES,
                        message:
                            "etcd at \(endpoint.absoluteString) requires a user (\(message)): set $PREFS_ETCD_USER with $PREFS_ETCD_PASSWORD or a password file"
                    )
                case .invalidToken, .other:
                    throw PreferencesError.io(
                        operation: operation, path: subject, code: EIO,
                        message: "etcd at \(endpoint.absoluteString) said: \(message)")
                }
            case .transport(let message, let sent):
                if sent && !idempotent {
                    shared.withLock { $0.failedAt[index] = .now() }
                    throw OutcomeUnknown(detail: "\(endpoint.absoluteString): \(message)")
                }
                note(message, for: index, in: &lastSaid)
                step += 1
            }
        }
    }

    /// Keeps what an endpoint said last; a time-out that only means the
    /// call's own deadline came does not hide a more telling earlier reason
    /// (a certificate the system does not trust, a refused connection).
    private func note(_ message: String, for index: Int, in lastSaid: inout [String?]) {
        shared.withLock { $0.failedAt[index] = .now() }
        if message == "timed out", lastSaid[index] != nil { return }
        lastSaid[index] = message
    }

    /// Throws unless `json`, the answer of `endpoint` to `path`, has the
    /// shape etcd gives it (``EtcdReplyShape``). A malformed answer fails
    /// the call at once, naming the endpoint and the field: it comes from
    /// something that is not etcd (a proxy, a stub), which another try
    /// would not change. For a call that changes data, whether it was
    /// applied is then unknown, as after any other error of that call.
    ///
    /// - Throws: `PreferencesError.io(operation:path:code:message:)` with `EBADMSG`.
    func checkShape(
        of json: PreferenceValue, from endpoint: URL, to path: String, operation: String
    )
        throws
    {
        guard let problem = EtcdReplyShape.answer(to: path).problem(with: json, at: "") else {
            return
        }
        throw PreferencesError.io(
            operation: operation, path: subject, code: EBADMSG,
            message:
                "etcd at \(endpoint.absoluteString) sent a malformed answer to \(path): \(problem)")
    }

    /// The error for a call no endpoint answered: every endpoint and what it said last.
    func unreachable(operation: String, lastSaid: [String?]) -> PreferencesError {
        let endpoints = configuration.endpoints
        let said = endpoints.indices.map { index in
            "\(endpoints[index].absoluteString) (\(lastSaid[index] ?? "no answer"))"
        }
        let seconds = String(cFormat: "%g", configuration.timeout)
        return PreferencesError.io(
            operation: operation, path: subject, code: ETIMEDOUT,
            message:
                "no etcd endpoint answered within \(seconds) s: \(said.joined(separator: ", "))")
    }

    /// A failure that sends the call to the next endpoint.
    private struct EndpointFailure: Error {
        let message: String
    }

    /// Returns the token for a call, signing in at `endpoint` when there is none yet.
    private func signIn(at endpoint: URL, deadline: DispatchTime) throws -> String? {
        guard let credentials = configuration.credentials else { return nil }
        if let token = shared.withLock({ $0.token }) { return token.isEmpty ? nil : token }
        let body: PreferenceValue = [
            "name": .string(credentials.user), "password": .string(credentials.password),
        ]
        let payload = Data(body.jsonText.utf8)
        switch send("/v3/auth/authenticate", payload, to: endpoint, token: nil, deadline: deadline)
        {
        case .transport(let message, _):
            throw EndpointFailure(message: message)
        case .reply(let status, let json):
            if status == 200 {
                try checkShape(
                    of: json, from: endpoint, to: "/v3/auth/authenticate",
                    operation: "sign in to etcd as user '\(credentials.user)' for")
                let token = json["token"]?.stringValue ?? ""
                shared.withLock { $0.token = token }
                return token
            }
            let message = Self.errorMessage(json) ?? "HTTP status \(status)"
            if message.contains("authentication is not enabled") {
                shared.withLock { $0.token = "" }
                return nil
            }
            if case .unavailable = Self.classify(message, status: status) {
                throw EndpointFailure(message: message)
            }
            throw PreferencesError.io(
                operation: "sign in to etcd as", path: "user '\(credentials.user)'",
                code: EACCES, message: "\(endpoint.absoluteString) said: \(message)")
        }
    }

    // MARK: One request

    /// The transport for an endpoint: sockets for `http`, TLS's for `https`.
    func transport(for endpoint: URL) -> any EtcdTransport {
        EtcdConfiguration.isHTTPS(endpoint) ? secureTransport : plainTransport
    }

    /// Sends one request to one endpoint and waits (blocking) for the answer.
    func send(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?, deadline: DispatchTime
    ) -> EtcdAnswer {
        transport(for: endpoint).send(path, payload, to: endpoint, token: token, deadline: deadline)
    }

    // MARK: Replies

    enum ErrorKind: Equatable {
        case invalidToken
        case permissionDenied
        /// Worth trying elsewhere; `mayHaveApplied` when the request may
        /// still have been carried out.
        case unavailable(mayHaveApplied: Bool)
        case other
    }

    static func classify(_ message: String, status: Int) -> ErrorKind {
        if message.contains("invalid auth token") || message.contains("user name is empty")
            || message.contains("auth: revision")
        {
            return .invalidToken
        }
        if message.contains("permission denied") { return .permissionDenied }
        if message.contains("leader changed") || message.contains("request timed out")
            || message.contains("timed out")
        {
            return .unavailable(mayHaveApplied: true)
        }
        if message.contains("no leader") || message.contains("not capable")
            || message.contains("too many requests") || message.contains("unhealthy")
            || message.contains("stopped") || status >= 500
        {
            return .unavailable(mayHaveApplied: status == 504)
        }
        return .other
    }

    /// The text of an error reply, or of a watch's error object.
    static func errorMessage(_ json: PreferenceValue) -> String? {
        json["error"]?.stringValue ?? json["message"]?.stringValue
            ?? json["error"]?["message"]?.stringValue
    }

    static func seconds(from start: DispatchTime, to end: DispatchTime) -> Double {
        guard end > start else { return 0 }
        return Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }
}

// MARK: JSON helpers

extension EtcdClient {
    /// The JSON object in `bytes` (a reply, a watch line); nil for anything else.
    static func jsonObject(_ bytes: Data) -> PreferenceValue? {
        let value = try? JSONText.parse(Array(bytes), source: "etcd reply")
        return if case .object? = value { value } else { nil }
    }

    /// A key or value for a request: base64 of UTF-8 text or bytes, as a JSON string.
    static func base64(_ text: String) -> PreferenceValue { base64(Array(text.utf8)) }
    static func base64(_ bytes: [UInt8]) -> PreferenceValue {
        .string(Data(bytes).base64EncodedString())
    }

    /// A 64-bit number of a reply (a revision, a lease id, a TTL); 0 when omitted.
    ///
    /// The gateway follows protobuf's JSON mapping: a 64-bit integer is a
    /// decimal string (a reader keeping numbers as doubles loses digits past
    /// 2^53), a field at its zero value is left out (missing means 0, not an
    /// error), and a plain number is allowed too (`etcdctl -w json` writes them).
    /// The field's type was checked with the answer (``EtcdReplyShape``).
    static func int64(_ value: PreferenceValue?) -> Int64 {
        if let text = value?.stringValue { return Int64(text) ?? 0 }
        return value?.integerValue ?? 0
    }

    /// The header's store revision.
    static func headerRevision(_ json: PreferenceValue) -> Int64 {
        int64(json["header"]?["revision"])
    }

    /// The bytes of a base64 field; an omitted field is empty. The field
    /// was checked with the answer (``EtcdReplyShape``).
    static func bytes(_ value: PreferenceValue?) -> [UInt8] {
        guard let text = value?.stringValue, let data = Data(base64Encoded: text) else { return [] }
        return Array(data)
    }
}
