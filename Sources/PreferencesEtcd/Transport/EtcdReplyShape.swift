import Preferences

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What etcd's JSON gateway answers to each call, field by field: every
/// answer (and every line of a watch) is checked against its shape before
/// anything is read from it, so a field of the wrong type is a malformed
/// answer, never an empty store or a revision of 0.
///
/// The gateway follows protobuf's JSON mapping, and the shapes follow it:
///
/// - A field at its zero value is left out: no `kvs` is no key, no
///   `succeeded` is false, no `count` is 0. An absent field is valid, except
///   where etcd always sends one (the `header` of every answer to a call,
///   the `key` of a key-value, the `ID` of a granted lease, the `token` of a
///   sign-in).
/// - A 64-bit integer is a decimal string; a plain JSON integer is taken
///   too (`etcdctl -w json` writes them). Member ids and raft terms are
///   unsigned, often past `Int64.max`.
/// - Bytes (keys, values) are standard base64.
/// - Members the shape does not name are ignored, so a newer etcd that adds
///   fields is still understood.
indirect enum EtcdReplyShape: Sendable {
    case int64
    case uint64
    case bool
    case string
    /// Base64 bytes.
    case base64
    /// One of these strings.
    case oneOf([String])
    case array(EtcdReplyShape)
    /// An object with these members, of which `required` must be present.
    case object([String: EtcdReplyShape], required: Set<String> = [])
    /// Any JSON value (a part the client reads no field of).
    case anything

    /// What is wrong with `value` as this shape, naming the field (`kvs[0].value`); nil when it fits.
    func problem(with value: PreferenceValue, at name: String) -> String? {
        switch (self, value) {
        case (.anything, _), (.bool, .bool), (.string, .string):
            return nil
        case (.int64, .int):
            return nil
        case (.int64, .string(let text)):
            return Int64(text) == nil
                ? "\(name) is \(Self.quoted(text)), not a decimal integer" : nil
        case (.uint64, .int(let number)):
            return number < 0 ? "\(name) is \(number), not an unsigned integer" : nil
        case (.uint64, .string(let text)):
            return UInt64(text) == nil
                ? "\(name) is \(Self.quoted(text)), not a decimal unsigned integer" : nil
        case (.base64, .string(let text)):
            return Data(base64Encoded: text) == nil
                ? "\(name) is not base64: \(Self.quoted(text))" : nil
        case (.oneOf(let choices), .string(let text)):
            return choices.contains(text)
                ? nil
                : "\(name) is \(Self.quoted(text)), not one of \(choices.joined(separator: ", "))"
        case (.array(let element), .array(let items)):
            for (index, item) in items.enumerated() {
                if let problem = element.problem(with: item, at: "\(name)[\(index)]") {
                    return problem
                }
            }
            return nil
        case (.object(let members, let required), .object(let fields)):
            let prefix = name.isEmpty ? "" : name + "."
            for member in required.sorted() where fields[member] == nil {
                return "\(prefix)\(member) is missing"
            }
            for (member, shape) in members.sorted(by: { $0.key < $1.key }) {
                guard let field = fields[member] else { continue }
                if let problem = shape.problem(with: field, at: prefix + member) { return problem }
            }
            return nil
        default:
            return
                "\(name.isEmpty ? "the answer" : name) is \(value.typeDescription), not \(expected)"
        }
    }

    /// The kind of value this shape takes, for messages.
    private var expected: String {
        switch self {
        case .int64: "a decimal integer"
        case .uint64: "a decimal unsigned integer"
        case .bool: "a boolean"
        case .string, .oneOf: "a string"
        case .base64: "a base64 string"
        case .array: "an array"
        case .object: "an object"
        case .anything: "any value"
        }
    }

    /// A string as a message shows it: quoted, and cut after 40 characters.
    private static func quoted(_ text: String) -> String {
        let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
        return "\"\(shown)\""
    }

    // MARK: The answers

    /// What a call to `path` answers with status 200.
    static func answer(to path: String) -> EtcdReplyShape {
        switch path {
        case "/v3/kv/range": range
        case "/v3/kv/put": .object(["header": header, "prev_kv": keyValue], required: ["header"])
        case "/v3/kv/txn": transaction
        case "/v3/lease/grant":
            .object(
                ["header": header, "ID": .int64, "TTL": .int64, "error": .string],
                required: ["header", "ID"])
        case "/v3/lease/keepalive":
            // A streaming call answered once, inside `result`.
            .object(["result": lease, "error": .anything])
        case "/v3/lease/revoke": .object(["header": header], required: ["header"])
        case "/v3/maintenance/status":
            .object(
                [
                    "header": header, "version": .string, "dbSize": .int64, "leader": .uint64,
                    "raftIndex": .uint64, "raftTerm": .uint64, "raftAppliedIndex": .uint64,
                    "dbSizeInUse": .int64, "isLearner": .bool, "errors": .array(.string),
                ], required: ["header"])
        case "/v3/auth/authenticate":
            .object(["header": header, "token": .string], required: ["header", "token"])
        case "/v3/watch": watchLine
        default: .object([:])
        }
    }

    static let header = EtcdReplyShape.object([
        "cluster_id": .uint64, "member_id": .uint64, "revision": .int64, "raft_term": .uint64,
    ])

    static let keyValue = EtcdReplyShape.object(
        [
            "key": .base64, "create_revision": .int64, "mod_revision": .int64,
            "version": .int64, "value": .base64, "lease": .int64,
        ], required: ["key"])

    static let range = EtcdReplyShape.object(
        ["header": header, "kvs": .array(keyValue), "more": .bool, "count": .int64],
        required: ["header"])

    static let transaction = EtcdReplyShape.object(
        [
            "header": header, "succeeded": .bool,
            "responses": .array(
                .object([
                    "response_range": range,
                    "response_put": .object(["header": header, "prev_kv": keyValue]),
                    "response_delete_range": .object([
                        "header": header, "deleted": .int64, "prev_kvs": .array(keyValue),
                    ]),
                    "response_txn": .anything,
                ])),
        ], required: ["header"])

    static let lease = EtcdReplyShape.object(["header": header, "ID": .int64, "TTL": .int64])

    /// One line of a watch's stream: `result`, or `error` (read as a message).
    static let watchLine = EtcdReplyShape.object([
        "result": .object([
            "header": header, "watch_id": .int64, "created": .bool, "canceled": .bool,
            "compact_revision": .int64, "cancel_reason": .string, "fragment": .bool,
            "events": .array(
                .object(
                    ["type": .oneOf(["PUT", "DELETE"]), "kv": keyValue, "prev_kv": keyValue],
                    required: ["kv"])),
        ]),
        "error": .anything,
    ])
}
