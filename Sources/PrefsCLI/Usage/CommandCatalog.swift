/// Every `prefs` command and global option, with the text `--help` shows.
enum CommandCatalog {
    static let globalOptions: [OptionSpec] = [
        .value("--file", "PATH", "Use the store file at PATH."),
        .value(
            "--suite", "NAME",
            "Use the named suite's file (default 'default'; see 'prefs path --help')."),
        .value(
            "--manifest", "FILE",
            "Type, validate and default keys from a key manifest (JSON); default: $PREFS_MANIFEST, else the manifest published beside the store (NAME.keys.json)."
        ),
    ]

    static let commands: [CommandSpec] = [
        get, set, delete, list, clear, importCommand, export, watch, check, path,
    ]

    static let get = CommandSpec(
        name: "get", argumentsSynopsis: "KEY", argumentCount: (1, 1),
        options: [
            .flag("--json", "Print the value as JSON even when it is a string."),
            .flag("--long", "Add when and by whom the key was last changed."),
        ],
        summary: "Print a key's value.",
        discussion: """
            Strings are printed as they are; other values as compact JSON. A key \
            that is not stored prints its default when the key manifest declares \
            one; otherwise the command exits with status 1. With --long the line \
            ends with '  # <UTC time> by <user> using <program>' (or '  # default'); \
            with --long --json it is one object: {"value":…,"modified":{…}}.
            """,
        examples: [
            ("get language", "prints: fr"),
            ("get language --json", "prints: \"fr\""),
            ("--suite com.example.app get map_zoom", "prints: 14.5"),
        ])

    static let set = CommandSpec(
        name: "set", argumentsSynopsis: "KEY VALUE", argumentCount: (2, 2),
        options: [
            .value(
                "--type", "TYPE",
                "Store VALUE as bool, int, double, string, json, date (ISO 8601) or data (base64).")
        ],
        summary: "Store a value.",
        discussion: """
            Without --type, VALUE takes the type the key manifest declares for KEY; \
            else the type of the value stored now (a string stays a string: over \
            "abc", 'set build 42' stores "42"), and a VALUE that does not fit it \
            exits with status 3 (pass --type to change the type); else, for a new \
            key, true and false are booleans, an integer literal is an int, a \
            decimal literal (1.5, 2e3) is a double and anything else is a string. \
            A declared value must also fit the key's range and allowed values. \
            The write is durable when the command returns, and running services \
            see it. Use -- before a VALUE that starts with a dash.
            """,
        examples: [
            ("set dark_mode true", "stores the boolean true"),
            ("set build 42 --type string", "stores the string \"42\""),
            ("set servers '[\"a\",\"b\"]' --type json", "stores an array"),
            ("set last_sync 2026-03-01T09:30:00Z --type date", "stores a date"),
            ("set motto -- --never-give-up", "stores a string starting with dashes"),
        ])

    static let delete = CommandSpec(
        name: "delete", argumentsSynopsis: "KEY", argumentCount: (1, 1), options: [],
        summary: "Remove a key, so its default applies again.",
        discussion: "Exits with status 1, changing nothing, when the key is not stored.",
        examples: [("delete language", "removes the stored language")])

    static let list = CommandSpec(
        name: "list", argumentsSynopsis: "", argumentCount: (0, 0),
        options: [
            .flag("--json", "Print one JSON object instead of lines."),
            .flag("--long", "Add when and by whom each key was last changed."),
            .flag("--defaults", "Also list the manifest's keys that are not set, with defaults."),
        ],
        summary: "Print every stored key and value.",
        discussion: """
            Prints "key = <json>" lines sorted by key; with --json, one JSON \
            object of the stored values. --long ends each line with \
            '  # <UTC time> by <user> using <program>' (under sudo the user reads \
            'root (sudo from alice)'). --defaults adds the keys the key manifest \
            declares that are not stored, with their defaults, each marked \
            '  # default'. With --json and either flag, each key maps to an object: \
            {"value":…,"modified":{"at":…,"by":…,"program":…}} or {"value":…,"default":true}.
            """,
        examples: [
            ("list", "prints: dark_mode = true"),
            (
                "list --long",
                "prints: dark_mode = true  # 2026-12-01T09:30:12.345Z by alice using prefs"
            ),
            ("list --defaults", "prints: language = \"en\"  # default"),
            ("list --json", "prints a JSON object"),
        ])

    static let clear = CommandSpec(
        name: "clear", argumentsSynopsis: "", argumentCount: (0, 0), options: [],
        summary: "Remove every stored key.",
        discussion: "Every default applies again. The app's data version is kept.",
        examples: [("--suite com.example.app clear", "empties that suite")])

    static let importCommand = CommandSpec(
        name: "import", argumentsSynopsis: "PATH", argumentCount: (1, 1),
        options: [
            .value(
                "--format", "FORMAT",
                "properties, shared-prefs, plist, envdir or json (required)."),
            .value(
                "--encoding", "ENCODING",
                "For properties: utf-8 (default) or iso-8859-1 (as Properties.load(InputStream))."),
            .value("--prefix", "P", "Import only the keys that start with P."),
            .flag("--overwrite", "Replace keys that are already stored (default: keep them)."),
        ],
        summary: "Import a legacy settings file in one atomic write.",
        discussion: """
            Reads the whole file first: a malformed file imports nothing and \
            exits with status 4, naming the file and line. Keys already stored \
            are kept unless --overwrite is given; the summary line says how \
            many were skipped. With a key manifest, string values of declared keys \
            are converted to the declared type, and every imported value must \
            fit its declaration.
            """,
        examples: [
            ("import app.properties --format properties", "imports every key"),
            (
                "import prefs.xml --format shared-prefs --prefix sync. --overwrite",
                "imports the sync.* keys, replacing stored ones"
            ),
            ("import legacy.properties --format properties --encoding iso-8859-1", "Latin-1 file"),
        ])

    static let export = CommandSpec(
        name: "export", argumentsSynopsis: "", argumentCount: (0, 0),
        options: [.value("--format", "FORMAT", "json (default), properties or plist.")],
        summary: "Print the stored values in another format.",
        discussion: """
            json prints one object of the values ('prefs import --format json' \
            reads it back). properties escapes as java.util.Properties.store \
            does, writing non-strings as JSON text. plist writes an XML property \
            list; null values, which a property list cannot hold, are left out \
            with a warning.
            """,
        examples: [
            ("export > backup.json", "saves the values"),
            ("export --format properties > app.properties", "for a Java program"),
        ])

    static let watch = CommandSpec(
        name: "watch", argumentsSynopsis: "[KEY ...]", argumentCount: (0, nil), options: [],
        summary: "Print one JSON line per change until interrupted.",
        discussion: """
            First prints the current value of every stored key (or of each KEY \
            given), then one line per changed key as changes happen, in this \
            process or any other: {"key":"k","value":<json>} when a key is set \
            and {"key":"k","removed":true} when it is removed. Lines are \
            flushed as they are written. SIGINT or SIGTERM ends it with status 0.
            """,
        examples: [
            ("watch", "follows every key"),
            ("watch dark_mode language", "follows two keys"),
        ])

    static let check = CommandSpec(
        name: "check", argumentsSynopsis: "", argumentCount: (0, 0), options: [],
        summary: "Validate the store file (and its values against the key manifest).",
        discussion: """
            Exits with status 4 and the reason when the file is not a valid \
            preferences file (it is reported, never reset). Prints the path and \
            the number of stored keys when all is well. With a key manifest, every \
            stored value that does not fit its declaration is reported on its \
            own line and the command exits with status 3.
            """,
        examples: [
            ("--suite com.example.app check", "checks that suite's file"),
            ("--manifest keys.json check", "also checks types, ranges and allowed values"),
        ])

    static let path = CommandSpec(
        name: "path", argumentsSynopsis: "", argumentCount: (0, 0), options: [],
        summary: "Print the store file's path.",
        discussion: """
            --file wins; else the suite (--suite, default 'default') is \
            $PREFS_HOME/NAME.json, else $XDG_CONFIG_HOME/prefs/NAME.json, else \
            ~/.config/prefs/NAME.json (macOS: ~/Library/Application Support/prefs/). \
            Suite names are letters, digits, '.', '_' and '-', not starting with '.'.
            """,
        examples: [("--suite com.example.app path", "prints where that suite lives")])
}
