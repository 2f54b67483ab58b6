import Foundation
import Preferences

package enum Theme: String, Codable, Sendable { case light, dark }
package enum Level: Int, Codable, Sendable { case low = 1, high = 2 }

package struct Window: Codable, Sendable, Equatable {
    package var width: Int
    package var height: Int
    package var title: String?

    package init(width: Int, height: Int, title: String? = nil) {
        self.width = width
        self.height = height
        self.title = title
    }
}

extension PreferenceKeys {
    package static let darkMode = PreferenceKey<Bool>("dark_mode", default: false)
    package static let language = PreferenceKey<String>("language", default: "en")
    package static let mapZoom = PreferenceKey<Double>("map_zoom", default: 14)
    package static let counter = PreferenceKey<Int>("counter", default: 0)
    package static let bigCounter = PreferenceKey<Int64>("big", default: 0)
    package static let ratio = PreferenceKey<Float>("ratio", default: 0.5)
    package static let blob = PreferenceKey<Data>("blob", default: Data())
    package static let lastSync = PreferenceKey<Date?>("last_sync", default: nil)
    package static let when = PreferenceKey<Date>("when", default: Date(timeIntervalSince1970: 0))
    package static let homepage = PreferenceKey<URL>(
        "homepage", default: URL(string: "https://example.com")!)
    package static let tags = PreferenceKey<[String]>("tags", default: [])
    package static let limits = PreferenceKey<[String: Int]>("limits", default: [:])
    package static let nickname = PreferenceKey<String?>("nickname", default: nil)
    package static let theme = PreferenceKey<Theme>("theme", default: .light)
    package static let level = PreferenceKey<Level>("level", default: .low)
    package static let window = PreferenceKey<Window>(
        "window", default: Window(width: 800, height: 600))
}
