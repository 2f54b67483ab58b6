#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One process that has a store open (F2, <doc:RollingOutAChange>): where it
/// runs, which program it is, the manifest it declared, and the last change
/// it has applied.
///
/// A store registers its process with its backend while a handle with live
/// reads is open, and reports each change it applies (at most one small
/// write per change, coalesced when changes come faster). `prefs replicas`
/// lists the registrations; `prefs set --wait` waits until every live
/// replica reports the change's sequence.
public struct PreferencesReplica: Sendable, Hashable {
    /// The host name of the machine the process runs on.
    public var host: String
    /// The process id.
    public var pid: Int32
    /// The program's name (``PreferencesReplica/currentProgram``).
    public var program: String
    /// The digest of the key manifest the process declared
    /// (``PreferencesManifest/digest``), or "" when it declared none.
    public var manifest: String
    /// When the process opened the store.
    public var since: Date
    /// The sequence of the last change the process has applied
    /// (``PreferencesSnapshot/sequence``).
    public var applied: Int64

    /// A replica with the given fields.
    public init(
        host: String, pid: Int32, program: String, manifest: String, since: Date, applied: Int64
    ) {
        self.host = host
        self.pid = pid
        self.program = program
        self.manifest = manifest
        self.since = since
        self.applied = applied
    }

    /// `host/pid`, as messages name a replica.
    public var name: String { "\(host)/\(pid)" }

    /// The name this process registers under: `$PREFS_PROGRAM`, else the
    /// name of its executable.
    public static var currentProgram: String {
        if let name = Platform.environment("PREFS_PROGRAM"), !name.isEmpty { return name }
        return Platform.lastComponent(of: CommandLine.arguments.first ?? "program")
    }

    /// This process, with no manifest and nothing applied yet.
    static func current(since: Date = Date()) -> PreferencesReplica {
        PreferencesReplica(
            host: Platform.hostName, pid: Platform.processID, program: currentProgram,
            manifest: "", since: since, applied: 0)
    }

    // MARK: JSON

    /// The replica as one JSON object on one line: `host`, `pid`, `program`,
    /// `manifest`, `applied`, `since` (ISO 8601).
    public var jsonText: String {
        JSONText.encode(jsonValue, pretty: false)
    }

    /// The replica as a JSON object.
    public var jsonValue: PreferenceValue {
        [
            "host": .string(host), "pid": .int(Int64(pid)), "program": .string(program),
            "manifest": .string(manifest), "applied": .int(applied),
            "since": .string(ISO8601.format(since)),
        ]
    }

    /// Parses ``jsonText``; nil when `bytes` are not a registration (a torn
    /// or foreign file).
    public init?(jsonBytes bytes: [UInt8]) {
        guard case .object(let fields)? = try? JSONText.parse(bytes, source: "<replica>"),
            case .string(let host)? = fields["host"], case .int(let pid)? = fields["pid"],
            case .string(let program)? = fields["program"],
            case .string(let manifest)? = fields["manifest"],
            case .int(let applied)? = fields["applied"],
            case .string(let sinceText)? = fields["since"], let since = ISO8601.parse(sinceText),
            let pid32 = Int32(exactly: pid)
        else { return nil }
        self.init(
            host: host, pid: pid32, program: program, manifest: manifest, since: since,
            applied: applied)
    }
}

extension PreferencesManifest {
    /// A short digest of the manifest's ``jsonText`` (16 hex digits of
    /// 64-bit FNV-1a), naming one version of a program's declarations.
    public var digest: String {
        Self.digest(of: Array(jsonText.utf8))
    }

    /// The digest of a manifest's bytes (``digest`` of the manifest they encode).
    public static func digest(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
