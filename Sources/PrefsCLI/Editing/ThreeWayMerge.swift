import Preferences

/// The three-way merge of `prefs edit`: what the editor changed, against
/// the values it was shown (the base), applied to the values stored when
/// the change is written.
///
/// A key whose edited value differs from the base is an editor change
/// (adding and removing a key are changes too). Against the store's
/// values at the time of the write, each editor change is:
///
/// - applied, when the store still holds the base's value;
/// - nothing to do, when the store already holds the edited value;
/// - a conflict otherwise: both sides changed the key, differently.
///
/// Keys the editor left as they were are not touched, so what another
/// process changed meanwhile stays as the store has it.
///
/// ```swift
/// let merge = ThreeWayMerge(base: ["a": 1, "b": 1], edited: ["a": 2, "b": 1])
/// merge.outcome(current: ["a": 1, "b": 5])   // .apply(["a": 1 → 2]); b stays 5
/// merge.outcome(current: ["a": 3, "b": 1])   // .conflict(["a"])
/// ```
struct ThreeWayMerge: Sendable {
    /// One key's change: its value before and after (nil: not set).
    struct Change: Sendable, Equatable {
        let old: PreferenceValue?
        let new: PreferenceValue?
    }

    /// What writing the edit does to the values stored now.
    enum Outcome: Sendable, Equatable {
        /// Set (or, for nil, remove) these keys; empty when the store
        /// already holds every edited value. `old` is the stored value.
        case apply([String: Change])
        /// These keys changed on both sides, to different values, in byte order.
        case conflict([String])
    }

    /// The editor's changes, by key: `old` from the base, `new` as edited.
    let changes: [String: Change]

    init(base: [String: PreferenceValue], edited: [String: PreferenceValue]) {
        var changes: [String: Change] = [:]
        for key in Set(base.keys).union(edited.keys) where base[key] != edited[key] {
            changes[key] = Change(old: base[key], new: edited[key])
        }
        self.changes = changes
    }

    /// What the edit does to `current`, the values stored at the moment of
    /// the write.
    func outcome(current: [String: PreferenceValue]) -> Outcome {
        var applied: [String: Change] = [:]
        var conflicts: [String] = []
        for (key, change) in changes {
            let stored = current[key]
            if stored == change.old {
                applied[key] = Change(old: stored, new: change.new)
            } else if stored != change.new {
                conflicts.append(key)
            }
        }
        return conflicts.isEmpty ? .apply(applied) : .conflict(conflicts.sortedByBytes())
    }
}
