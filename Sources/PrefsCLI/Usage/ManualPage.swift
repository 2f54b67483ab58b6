import Preferences

/// `prefs(1)`, the manual page, in man(7) markup: written from
/// ``PrefsTool/commands`` and ``GlobalOptions``, as `prefs --help` is, so
/// the two list the same commands and options with the same words.
///
/// `prefs help --man` prints it (a hidden flag: the page is for packagers
/// and `scripts/install.sh`, which install it as `man1/prefs.1`). Besides
/// the command table it holds what `--help` has no room for: every exit
/// status, the environment `prefs` reads, the files it uses, and the
/// operator's loop as examples. The page carries no date, so that the
/// same version always writes the same bytes.
enum ManualPage {
    static var text: String {
        var page = ManualText()
        page.request("TH", "PREFS", "1", "", "prefs \(PreferencesVersion.current)", "User Commands")
        // No hyphenation: option names and paths are copied from the page.
        page.request("nh")
        page.section("NAME")
        page.text("prefs - read and change preferences stores from the shell")
        page.section("SYNOPSIS")
        page.synopsis(
            "prefs [--file PATH | --suite NAME] [--manifest FILE] [--reveal] COMMAND [ARGS]")
        page.request("br")
        page.synopsis(
            "prefs --etcd ENDPOINTS [--suite NAME | --key KEY] [--etcd-password-file FILE] COMMAND [ARGS]"
        )
        page.request("br")
        page.synopsis("prefs --help | --version")
        description(&page)
        commands(&page)
        page.section("GLOBAL OPTIONS")
        page.text("These options may come before or after the command.")
        for option in GlobalOptions.optionSpecs + [GlobalOptions.help, GlobalOptions.version] {
            page.tagged(option)
        }
        exitStatus(&page)
        ManualPage.environment(&page)
        files(&page)
        examples(&page)
        page.section("SEE ALSO")
        page.text(
            "The Preferences documentation, \"The prefs command\" and \"The operator loop\"; "
                + "'prefs COMMAND --help' for one command.")
        return page.markup
    }

    private static func description(_ page: inout ManualText) {
        page.section("DESCRIPTION")
        page.text(
            "prefs reads and changes a preferences store: a JSON file a service reads its settings from, or a key in etcd. It goes through the same library as the service, so it takes the same lock (the file's name with .lock added), writes durably (a temporary file, fsync, rename), records who made each change, and a running service sees every change without a restart."
        )
        page.paragraph()
        page.text(
            "With --file PATH the store is that file. Otherwise it is the file of the suite NAME (--suite, default 'default'): $PREFS_HOME/NAME.json, else $XDG_CONFIG_HOME/prefs/NAME.json, else ~/.config/prefs/NAME.json. With --system it is the suite's system-wide file, which a service and its operators share: $PREFS_SYSTEM_HOME/NAME/NAME.json, else /var/lib/prefs/NAME/NAME.json, in a directory that belongs to the service's user (systemd's StateDirectory=prefs/NAME) and that prefs never creates; under sudo, prefs leaves every file it writes there to that user and follows no link that user made. Suite names are letters, digits, '.', '_' and '-', not starting with '.'. With --etcd (or $PREFS_ETCD_ENDPOINTS) the store is the etcd key /prefs/NAME, or the one --key gives; for https endpoints prefs runs prefs-tls, installed beside it, with the same arguments."
        )
        page.paragraph()
        page.text(
            "A key manifest (--manifest, $PREFS_MANIFEST, else the one a service published beside the store) declares keys' types, defaults and limits: set types and checks values by it, get prints a declared default for a key not stored."
        )
    }

    private static func commands(_ page: inout ManualText) {
        page.section("COMMANDS")
        for command in PrefsTool.commands {
            page.subsection(command.name)
            page.synopsis(command.usage)
            page.paragraph()
            page.text(command.help.summary + " " + command.help.discussion)
            let options = command.optionSpecs.filter { !$0.isHidden }
            if !options.isEmpty {
                page.request("RS")
                for option in options { page.tagged(option) }
                page.request("RE")
            }
            if !command.help.examples.isEmpty {
                page.paragraph()
                page.text("Examples:")
                page.request("RS")
                for example in command.help.examples {
                    page.tagged("prefs " + example.command, example.explanation)
                }
                page.request("RE")
            }
        }
    }

    private static func exitStatus(_ page: inout ManualText) {
        page.section("EXIT STATUS")
        let statuses: [ExitStatus] = [
            .success, .keyNotSet, .usage, .invalidValue, .corrupt, .ioError, .waitTimedOut,
        ]
        for status in statuses {
            page.tagged(String(status.rawValue), meaning(of: status), literal: false)
        }
        page.paragraph()
        page.text(
            "Errors are one line on standard error, 'prefs: error: ...'. A failing command leaves the store as it was; a corrupt store is reported, never reset."
        )
    }

    /// What each status means; a switch, so a new status cannot be left out.
    private static func meaning(of status: ExitStatus) -> String {
        switch status {
        case .success: "Success; for diff, no differences."
        case .keyNotSet:
            "The key is not set (get, delete); for diff, the store differs from the file."
        case .usage:
            "Usage: an unknown command or option, a missing or extra argument, a bad option value, an invalid suite name."
        case .invalidValue:
            "A value or key invalid for its type, the key manifest or the store's limits; a change that has not been made, or that the history no longer keeps (revert, restore); a conflict (revert, edit)."
        case .corrupt:
            "The store, a legacy file or the key manifest is corrupt or unreadable as its format."
        case .ioError:
            "An I/O error: permission denied, disk full, the lock not obtained in time, an etcd cluster that does not answer, a missing prefs-tls, a failing editor."
        case .waitTimedOut:
            "--wait timed out: a running replica had not applied the change in time (the change is written all the same)."
        }
    }

    private static func environment(_ page: inout ManualText) {
        page.section("ENVIRONMENT")
        let variables = [
            ("PREFS_HOME", "The directory of the suites' files, NAME.json."),
            (
                "XDG_CONFIG_HOME",
                "Without PREFS_HOME, the suites' files are in $XDG_CONFIG_HOME/prefs."
            ),
            ("HOME", "Without either, the suites' files are in ~/.config/prefs."),
            (
                "PREFS_SYSTEM_HOME",
                "With --system, the directory of the suites' directories, NAME/NAME.json, instead of /var/lib/prefs."
            ),
            ("PREFS_MANIFEST", "The key manifest, when --manifest is not given."),
            (
                "PREFS_ETCD_ENDPOINTS",
                "Comma-separated etcd URLs, when none of --etcd, --file and --system is given."
            ),
            ("PREFS_ETCD_USER", "The etcd user name."),
            (
                "PREFS_ETCD_PASSWORD",
                "The etcd user's password, unless --etcd-password-file is given."
            ),
            (
                "VISUAL, EDITOR",
                "The editor of edit (VISUAL first, else EDITOR, else vi), a shell command line."
            ),
            ("TMPDIR", "Where edit makes the copy it opens (an absolute path, else /tmp)."),
            (
                "SUDO_USER",
                "Under sudo, the user the history records beside root, and the user edit runs the editor as."
            ),
        ]
        for (name, meaning) in variables {
            page.tagged(name, meaning)
        }
    }

    private static func files(_ page: inout ManualText) {
        page.section("FILES")
        let files = [
            (
                "~/.config/prefs/NAME.json",
                "The store of suite NAME, without PREFS_HOME or XDG_CONFIG_HOME."
            ),
            (
                "/var/lib/prefs/NAME/NAME.json",
                "The system-wide store of suite NAME (--system), without PREFS_SYSTEM_HOME; the directory belongs to the service's user."
            ),
            ("FILE.lock", "The lock prefs and the services using the store take to change FILE."),
            (
                "NAME.keys.json",
                "The key manifest a service published beside its store NAME.json, used when no other is given."
            ),
            (
                "prefs-tls",
                "In the directory of prefs: prefs with TLS, which prefs runs for https etcd endpoints."
            ),
        ]
        for (name, meaning) in files {
            page.tagged(name, meaning)
        }
    }

    private static func examples(_ page: inout ManualText) {
        page.section("EXAMPLES")
        page.text("The operator's loop on a running service's store:")
        let steps = [
            ("prefs --suite com.example.app get max_connections", "What the service reads now."),
            (
                "prefs --suite com.example.app set max_connections 1000 --wait",
                "Change it, and wait until every running replica has applied the change."
            ),
            (
                "prefs --suite com.example.app log -n 5",
                "The five newest changes: who made each, when, and each key's old and new value."
            ),
            (
                "prefs --suite com.example.app revert 412",
                "Undo change #412 as a new change: reverted #412 as #415."
            ),
            (
                "prefs --suite com.example.app watch max_connections",
                "One JSON line for the current value, then one per change, until interrupted."
            ),
        ]
        for (command, explanation) in steps {
            page.tagged(command, explanation)
        }
    }
}
