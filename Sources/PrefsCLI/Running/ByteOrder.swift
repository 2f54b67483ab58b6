extension Sequence<String> {
    /// The keys in the order of their UTF-8 bytes, the order the store file
    /// writes them in (Sources/Preferences/Format/StoreDocument.swift). Not
    /// `String`'s `<`, which compares normalized forms: "e" with a combining
    /// accent would come after "f".
    func sortedByBytes() -> [String] {
        sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }
}
