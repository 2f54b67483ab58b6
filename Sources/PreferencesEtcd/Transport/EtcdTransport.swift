import Dispatch
import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How the client reaches one endpoint: a request and its answer, or a
/// long-lived stream of lines (the watch).
///
/// ``SocketTransport`` speaks `http`; the `PreferencesEtcdTLS` library
/// brings the `https` one, through ``EtcdConfiguration/TLS``.
package protocol EtcdTransport: Sendable {
    /// Sends one POST and waits (blocking) for the answer, until `deadline`.
    func send(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?, deadline: DispatchTime
    ) -> EtcdAnswer

    /// Starts a streaming POST. `onLine` gets each line of the body, in
    /// order; `onEnd` once, when the stream ends for any reason but
    /// ``EtcdLineStream/cancel()``.
    func openStream(
        _ path: String, _ payload: Data, to endpoint: URL, token: String?,
        connectTimeout: TimeInterval, onLine: @escaping @Sendable (Data) -> Void,
        onEnd: @escaping @Sendable (String) -> Void
    ) -> any EtcdLineStream
}

/// A running streaming request.
package protocol EtcdLineStream: Sendable {
    func cancel()
}

/// What one request to one endpoint produced.
package enum EtcdAnswer {
    /// The server answered (any status), with its JSON object (`{}` for none).
    case reply(status: Int, json: PreferenceValue)
    /// No answer; `sent` is false when the request surely never reached a server.
    case transport(message: String, sent: Bool)

    /// The answer for a status and body as received.
    package static func received(status: Int, body: Data) -> EtcdAnswer {
        let json = EtcdClient.jsonObject(body)
        if status == 200 && json == nil {
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            return .reply(status: 502, json: ["error": .string("not JSON: \(text)")])
        }
        return .reply(status: status, json: json ?? [:])
    }
}

/// Splits a byte stream into lines.
package struct LineSplitter {
    private var buffer = Data()

    package init() {}

    package mutating func append(_ data: Data, _ onLine: (Data) -> Void) {
        buffer.append(data)
        while let newline = buffer.firstIndex(of: 0x0A) {
            let line = buffer[buffer.startIndex..<newline]
            buffer.removeSubrange(buffer.startIndex...newline)
            if !line.isEmpty { onLine(Data(line)) }
        }
    }
}
