/// A typed settings record, stored field by field in a preferences file
/// (the "proto-like" API; R1–R5, <doc:Records>).
///
/// Declare a struct whose `init()` holds the defaults. Each top-level field
/// is one key in the file, named by the record's coding keys, so records,
/// typed keys and `prefs get` all see the same values.
///
/// ```swift
/// struct AppSettings: PreferencesRecord {
///     var darkMode = false
///     var language = "en"
///     var window = Window()
///
///     enum CodingKeys: String, CodingKey {
///         case darkMode = "dark_mode"   // shared with PreferenceKeys.darkMode
///         case language, window
///     }
/// }
///
/// let settings = try await RecordStore<AppSettings>(fileURL: url)
/// try await settings.update { $0.darkMode = true }
/// ```
///
/// Fields missing from the file (and missing fields of nested structs)
/// take their `init()` values, so adding a field needs no migration and no
/// hand-written `init(from:)`.
public protocol PreferencesRecord: Codable, Sendable, Equatable {
    /// The defaults: the record as it reads from an empty file.
    init()
}
