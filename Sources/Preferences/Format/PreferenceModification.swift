#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// When a stored key was last changed, and by whom (S18, <doc:StoreGuarantees>).
///
/// The store records one for every key a write changes: the time in UTC,
/// the effective user's name and the program's name. Read it from a
/// snapshot:
///
/// ```swift
/// if let change = store.snapshot.modification(forKey: "dark_mode") {
///     print(change)   // 2026-12-01T09:30:12.345Z by root (sudo from alice) using prefs
///     let age = Date().timeIntervalSince(change.date)
/// }
/// ```
///
/// Only stored keys have one: a key at its default has none, and removing a
/// key removes its record. Writing a key's current value again changes
/// nothing, so it keeps its record (S5). A record update stamps only the
/// fields it changed, and a migration stamps the keys it writes.
///
/// Under `sudo`, ``user`` is `root` (the user whose rights made the change)
/// and ``sudoUser`` names the user who ran `sudo`, from `$SUDO_USER`. That
/// variable is recorded only when the process runs as root, where it cannot
/// grant anything a root process could not do anyway; treat it as
/// informative, as `sudo`'s own log does.
///
/// In the file it sits beside `values` (<doc:FileFormat>), in milliseconds:
///
/// ```json
/// "modified" : {
///   "dark_mode" : { "at" : "2026-12-01T09:30:12.345Z", "by" : "root", "program" : "prefs", "sudo_user" : "alice" }
/// }
/// ```
public struct PreferenceModification: Sendable, Hashable, CustomStringConvertible {
    /// When the key was last changed.
    public var date: Date
    /// The effective user that changed it (`root` under `sudo`).
    public var user: String
    /// The user who ran `sudo`, when the change was made through it.
    public var sudoUser: String?
    /// The name of the program that changed it, such as `prefs`.
    public var program: String

    /// A modification record, for tests and for building snapshots by hand.
    public init(date: Date, user: String, sudoUser: String? = nil, program: String) {
        self.date = date
        self.user = user
        self.sudoUser = sudoUser
        self.program = program
    }

    /// `2026-12-01T09:30:12.345Z by root (sudo from alice) using prefs`.
    public var description: String {
        "\(timestamp) by \(userDescription) using \(program)"
    }

    /// ``date`` in ISO 8601, UTC, with milliseconds: `2026-12-01T09:30:12.345Z`.
    public var timestamp: String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (whole, rest) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        let stem = ISO8601.format(Date(timeIntervalSince1970: Double(whole))).dropLast()
        let digits = String(rest)
        return stem + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// `root (sudo from alice)`, or just the user.
    public var userDescription: String {
        guard let sudoUser else { return user }
        return "\(user) (sudo from \(sudoUser))"
    }

    // MARK: The file's form

    /// The record as JSON, as the file's `modified` member stores it:
    /// `{"at":"2026-12-01T09:30:12.345Z","by":"root","program":"prefs","sudo_user":"alice"}`.
    public var jsonValue: PreferenceValue { ChangeRecord(self).storedValue }

    // MARK: This process

    /// A record for a change made now by this process.
    static func now() -> PreferenceModification {
        let identity = processIdentity
        // Milliseconds: precise enough to order changes, short to read.
        let milliseconds = (Date().timeIntervalSince1970 * 1000).rounded(.down)
        return PreferenceModification(
            date: Date(timeIntervalSince1970: milliseconds / 1000), user: identity.user,
            sudoUser: identity.sudoUser, program: identity.program)
    }

    private static let processIdentity: (user: String, sudoUser: String?, program: String) = {
        let environment = ProcessInfo.processInfo.environment
        var sudoUser: String?
        if Platform.isEffectivelyRoot, let name = environment["SUDO_USER"], !name.isEmpty,
            name != "root"
        {
            sudoUser = name
        }
        return (Platform.effectiveUserName(), sudoUser, ProcessInfo.processInfo.processName)
    }()
}
