import MetricsTestKit
import Preferences

/// Waits until a provider of `store`, made with `metrics`, has read the
/// published manifests for the first time: it samples the store's activity
/// into its feed gauge once that read is over. Throws
/// ``DeadlineExceeded`` when it has not within `deadline` (scaled).
func firstManifestRead(
    of store: PreferencesStore, recordedIn metrics: TestMetrics,
    within deadline: Duration = .seconds(10)
) async throws {
    try await eventually("the provider's first read of the manifests", within: deadline) {
        // The gauge exists from the provider's start; its first value comes
        // with the first sample.
        (try? metrics.expectGauge(
            "preferences_provider_feed_subscribers", [("store", store.location)]))?.lastValue
            != nil
    }
}
