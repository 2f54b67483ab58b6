import Foundation

@testable import Preferences

enum Theme: String, Codable, Sendable { case light, dark }
enum Level: Int, Codable, Sendable { case low = 1, high = 2 }

struct Window: Codable, Sendable, Equatable {
    var width: Int
    var height: Int
    var title: String?
}

extension PreferenceKeys {
    static let darkMode = PreferenceKey<Bool>("dark_mode", default: false)
    static let language = PreferenceKey<String>("language", default: "en")
    static let mapZoom = PreferenceKey<Double>("map_zoom", default: 14)
    static let counter = PreferenceKey<Int>("counter", default: 0)
    static let bigCounter = PreferenceKey<Int64>("big", default: 0)
    static let ratio = PreferenceKey<Float>("ratio", default: 0.5)
    static let blob = PreferenceKey<Data>("blob", default: Data())
    static let lastSync = PreferenceKey<Date?>("last_sync", default: nil)
    static let when = PreferenceKey<Date>("when", default: Date(timeIntervalSince1970: 0))
    static let homepage = PreferenceKey<URL>(
        "homepage", default: URL(string: "https://example.com")!)
    static let tags = PreferenceKey<[String]>("tags", default: [])
    static let limits = PreferenceKey<[String: Int]>("limits", default: [:])
    static let nickname = PreferenceKey<String?>("nickname", default: nil)
    static let theme = PreferenceKey<Theme>("theme", default: .light)
    static let level = PreferenceKey<Level>("level", default: .low)
    static let window = PreferenceKey<Window>("window", default: Window(width: 800, height: 600))
}
