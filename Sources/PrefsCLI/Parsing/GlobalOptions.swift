/// The options every command accepts, before or after its name: where the
/// store is and which key manifest applies.
enum GlobalOptions: OptionOwner {
    static let file = ValueOption<Self>(
        "--file", "PATH", help: "Use the store file at PATH.", completing: .files)
    static let suite = ValueOption<Self>(
        "--suite", "NAME",
        help: "Use the named suite's file (default 'default'; see 'prefs path --help').",
        completing: .suites)
    static let system = Flag<Self>(
        "--system",
        help:
            "Use the suite's system-wide file, which a service and its operators share: $PREFS_SYSTEM_HOME/NAME/NAME.json, else /var/lib/prefs/NAME/NAME.json."
    )
    static let manifest = ValueOption<Self>(
        "--manifest", "FILE",
        help:
            "Type, validate and default keys from a key manifest (JSON); default: $PREFS_MANIFEST, else the manifest published beside the store (NAME.keys.json).",
        completing: .files)
    static let etcd = ValueOption<Self>(
        "--etcd", "ENDPOINTS",
        help:
            "Use the store in etcd at these comma-separated URLs ($PREFS_ETCD_ENDPOINTS), under /prefs/NAME for --suite NAME."
    )
    static let key = ValueOption<Self>(
        "--key", "KEY", help: "With --etcd: use this etcd key instead of /prefs/NAME.")
    static let etcdPasswordFile = ValueOption<Self>(
        "--etcd-password-file", "FILE",
        help: "With --etcd: the password of $PREFS_ETCD_USER (else $PREFS_ETCD_PASSWORD).",
        completing: .files)

    static let reveal = Flag<Self>(
        "--reveal",
        help:
            "Show the values of secret keys instead of <redacted> (only 'get KEY' shows them otherwise)."
    )

    static let options: [any OptionDeclaration] = [
        file, suite, system, manifest, etcd, key, etcdPasswordFile, reveal,
    ]

    /// `--help` and `--version`, which the parser handles itself (`--help`
    /// after any command, `--version` only before one); for help and
    /// completion scripts.
    static let help = OptionSpec(
        name: "--help", valueName: nil, help: "Show help (also after a command).",
        completion: .nothing, isHidden: false)
    static let version = OptionSpec(
        name: "--version", valueName: nil, help: "Print the version.", completion: .nothing,
        isHidden: false)
}
