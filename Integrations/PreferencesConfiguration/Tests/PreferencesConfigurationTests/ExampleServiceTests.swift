import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The example service (`preferences-example-service`) as its users meet
/// it: run as a service's own user, changed by an operator with `prefs`,
/// stopped with SIGTERM; failing on a corrupt store with one line; and
/// quoted by the guide as it is compiled.
@Suite(.serialized) struct ExampleServiceTests {
    static let suite = "com.example.service"

    @Test(
        .enabled(
            if: canRunAsAnotherUser,
            "runs the service as another user (nobody), which needs root and setpriv"))
    func anOperatorsChangeReachesTheServiceWhichStopsCleanlyOnSIGTERM() async throws {
        let directory = try TemporaryDirectory()
        // The suite's own directory in the system scope, as systemd's
        // StateDirectory= gives it to the service's user.
        let system = directory.file("system")
        let home = system.appendingPathComponent(Self.suite)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        #expect(chown(home.path, serviceUser, serviceUser) == 0)
        let store = home.appendingPathComponent("\(Self.suite).json")
        let environment = childEnvironment(["PREFS_SYSTEM_HOME": system.path])
        let options = ["--system", "--suite", Self.suite]
        let service = try RunningChild(
            productURL("preferences-example-service"), [],
            environment: environment.merging(["GREETING": "Hi"]) { $1 }, user: serviceUser)
        // Nothing stored yet: the environment's greeting.
        try await service.line(on: .error, "the greeting from the environment") {
            $0.contains("greeting=Hi ")
        }
        #expect(
            try await replicaPIDs(options: options, environment: environment) == [service.pid])
        // The operator's change, through the same scope and suite, wins over the environment.
        try await prefs(options + ["set", "greeting", "Bonjour"], environment: environment)
        try await service.line(on: .error, "the operator's greeting") {
            $0.contains("greeting=Bonjour ")
        }
        service.send(SIGTERM)
        #expect(try await service.exit() == RunningChild.Exit(status: 0, bySignal: false))
        #expect(
            try await replicaPIDs(options: options, environment: environment) == [],
            "listed after it exited")
        // The worker stopped first, then the store closed.
        let log = service.lines(.error)
        let stopped = log.firstIndex { $0.hasSuffix(" stopped") }
        let closed = log.firstIndex { $0.hasSuffix(" closed the store") }
        #expect(stopped != nil && closed != nil && stopped! < closed!, "\(service.printed)")
        #expect(service.lines(.output) == [], "\(service.printed)")
        // `prefs` as root kept the service's user the owner of its store.
        let owner = try FileManager.default.attributesOfItem(atPath: store.path)[.ownerAccountID]
        #expect((owner as? NSNumber)?.uint32Value == serviceUser)
    }

    @Test func onACorruptStoreTheServicePrintsOneLineAndExitsWithAStatus() async throws {
        let directory = try TemporaryDirectory()
        let home = directory.file(Self.suite)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let store = home.appendingPathComponent("\(Self.suite).json")
        try Data("{ not json".utf8).write(to: store)
        let service = try RunningChild(
            productURL("preferences-example-service"), [],
            environment: childEnvironment(["PREFS_SYSTEM_HOME": directory.url.path]))
        let exit = try await service.exit()
        #expect(!exit.bySignal && exit.status != 0, "\(exit)")
        let log = service.lines(.error).filter { !$0.isEmpty }
        #expect(log.count == 1, "\(service.printed)")
        #expect(log.first?.contains(store.path) == true, "\(service.printed)")
        #expect(log.first?.contains("is not a valid preferences file") == true)
        #expect(!service.printed.contains("Fatal error"), "\(service.printed)")
        #expect(service.lines(.output) == [], "\(service.printed)")
    }

    /// The guide quotes the example's code between its markers, whole, in a
    /// `swift` code block.
    @Test func theGuideQuotesTheExampleAsItIsCompiled() throws {
        let package = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(
            contentsOf: package.appendingPathComponent(
                "Sources/preferences-example-service/ExampleService.swift"),
            encoding: .utf8)
        let guide = try String(
            contentsOf: package.appendingPathComponent(
                "../../Sources/Preferences/Preferences.docc/UsingSwiftConfiguration.md"),
            encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try #require(lines.firstIndex(of: "// guide: begin"))
        let end = try #require(lines.firstIndex(of: "// guide: end"))
        let quoted = lines[(begin + 1)..<end].joined(separator: "\n")
        #expect(quoted.count > 1000, "the region between the markers is the service")
        #expect(
            guide.contains("```swift\n\(quoted)\n```\n"),
            "the guide's quote of ExampleService.swift differs from the source between its markers")
    }
}
