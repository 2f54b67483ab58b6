import Preferences

/// A value guarded by a lock (the store's pthread mutex, which
/// ThreadSanitizer understands).
package typealias Protected<Value> = Locked<Value>
