import Configuration
import Preferences

/// One key's lookups over a feed of the store's states: the first state's,
/// then one each time the key's stored value (or whether it is secret)
/// changes.
struct ValueUpdates: AsyncSequence, Sendable {
    typealias Element = Result<LookupResult, any Error>
    typealias Failure = Never

    let snapshots: AsyncStream<PreferencesSnapshot>
    let key: AbsoluteConfigKey
    let type: ConfigType
    let snapshot: @Sendable (PreferencesSnapshot) -> PreferencesConfigSnapshot
    /// Told of each stored value met that is not of ``type``.
    var onMismatch: @Sendable (any Error) -> Void = { _ in }

    struct AsyncIterator: AsyncIteratorProtocol {
        var upstream: AsyncStream<PreferencesSnapshot>.AsyncIterator
        let updates: ValueUpdates
        /// What the last element was made from: nil before the first.
        var last: KeyLookup.Found??

        mutating func next() async -> Element? {
            while let state = await upstream.next() {
                if let element = element(for: state) { return element }
            }
            return nil
        }

        mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            while let state = await upstream.next(isolation: actor) {
                if let element = element(for: state) { return element }
            }
            return nil
        }

        /// The lookup in `state`, or nil when it found what the last one did.
        private mutating func element(for state: PreferencesSnapshot) -> Element? {
            let snapshot = updates.snapshot(state)
            let found = snapshot.find(updates.key)
            if let last, last == found { return nil }
            last = .some(found)
            do {
                return .success(try snapshot.value(forKey: updates.key, type: updates.type))
            } catch {
                updates.onMismatch(error)
                return .failure(error)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(upstream: snapshots.makeAsyncIterator(), updates: self, last: nil)
    }
}
