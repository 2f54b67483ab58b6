/// The names close to a mistyped one, as `git` suggests a command: `sett`
/// → `set`, `--jsno` → `--json`.
///
/// Closeness is the optimal string alignment distance (Damerau–Levenshtein
/// where no substring is edited twice): each inserted, removed or replaced
/// character, and each swap of two adjacent ones, counts one. A name is
/// close when the distance is at most 1 for a word of up to four
/// characters (leading dashes not counted) and at most 2 for a longer one,
/// and less than the word's own length, so `x` suggests nothing. Only the
/// names at the smallest distance are suggested, in the order given.
enum NearestName {
    /// The names of `candidates` closest to `word`, or none when none is
    /// close.
    static func suggestions(for word: String, among candidates: [String]) -> [String] {
        let typed = Array(word.drop { $0 == "-" })
        let limit = min(typed.count <= 4 ? 1 : 2, typed.count - 1)
        guard limit >= 1 else { return [] }
        var best: [String] = []
        var bestDistance = limit + 1
        for candidate in candidates where !best.contains(candidate) {
            let distance = Self.distance(typed, Array(candidate.drop { $0 == "-" }))
            if distance < bestDistance {
                best = [candidate]
                bestDistance = distance
            } else if distance == bestDistance {
                best.append(candidate)
            }
        }
        return best
    }

    /// `; did you mean 'set'?` (or `'a' or 'b'`), or nothing when no name
    /// is close.
    static func hint(for word: String, among candidates: [String]) -> String {
        let names = suggestions(for: word, among: candidates)
        guard !names.isEmpty else { return "" }
        return "; did you mean " + names.map { "'\($0)'" }.joined(separator: " or ") + "?"
    }

    /// The optimal string alignment distance between `a` and `b`.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // rows[i][j]: the distance between a's first i and b's first j characters.
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, rows[i - 2][j - 2] + 1)
                }
                rows[i][j] = best
            }
        }
        return rows[a.count][b.count]
    }
}
