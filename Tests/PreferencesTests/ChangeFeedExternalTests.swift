import Foundation
import PreferencesTestSupport
import PreferencesTesting
import Testing

@testable import Preferences

/// Writes by other processes and programs reach the feed (C3, C6, <doc:ObservingChanges>).
@Suite(.serialized, .takesTurns(.processes), .scaledTimeLimit(minutes: 5))
struct ChangeFeedExternalTests {
    @Test func aChildProcessWriteReachesTheParentsFeed() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)

        let child = try RunningProcess("prefs-harness", ["set", url.path, "counter", "42"])
        defer { child.kill() }
        #expect(try await child.nextLine() == "ok")
        #expect(await feed.next(42) == 42)
        #expect(store[.counter] == 42)
    }

    @Test func incrementsByAnotherProcessEndOnTheFinalCount() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let feed = FeedRecorder(store.changes(.counter))
        let result = try await runChild("prefs-harness", ["increment", url.path, "counter", "100"])
        #expect(result.status == 0, "increment: \(result.standardError)")
        #expect(await feed.next(100) == 100)
        #expect(feed.values == feed.values.sorted())
    }

    @Test func anEditorStyleReplacementIsSeen() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.language, "en")
        let feed = FeedRecorder(store.changes(.language))
        #expect(await feed.next("en") == "en")
        try replaceAtomically(url, with: storeFile(#"{ "language" : "fr" }"#))
        #expect(await feed.next("fr") == "fr")
        try replaceAtomically(url, with: storeFile(#"{ "language" : "it" }"#))
        #expect(await feed.next("it") == "it")
    }

    @Test func anInPlaceRewriteIsSeen() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        let feed = FeedRecorder(store.changes(.counter))
        let inode = try identity(url).inode
        // Truncate and write the same file, as `echo … > file` does.
        try write(storeFile(#"{ "counter" : 2 }"#), to: url)
        #expect(try identity(url).inode == inode)
        #expect(await feed.next(2) == 2)
    }

    @Test func deletingTheFileYieldsTheDefaultsAndRecreatingItIsSeen() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 9)
        let feed = FeedRecorder(store.changes())
        #expect(await feed.next(where: { $0[.counter] == 9 }) != nil)

        try FileManager.default.removeItem(at: url)
        let emptied = await feed.next(where: { $0.values.isEmpty })
        #expect(emptied?[.counter] == 0)
        #expect(store[.counter] == 0)

        try write(storeFile(#"{ "counter" : 10 }"#), to: url)
        #expect(await feed.next(where: { $0[.counter] == 10 }) != nil)
        // The store writes again after the file came back.
        try await store.set(.counter, 11)
        #expect(try storedValues(url)["counter"] == 11)
    }

    /// C6: the feed survives a corrupt external write, the store keeps its
    /// last good state and reports the problem, and the bad bytes stay.
    @Test func aCorruptReplacementIsReportedAndTheFeedContinues() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        try await store.set(.counter, 1)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(1) == 1)
        let problems = FeedRecorder(store.problemChanges())
        #expect(await problems.next([]) == [])

        let garbage = "{ \"format\" : 1, \"values\" : { \"counter\" : "
        try replaceAtomically(url, with: garbage)
        let reported = await problems.next(where: { list in
            list.contains { $0.message.contains(url.path) && $0.message.contains("not valid JSON") }
        })
        #expect(reported != nil, "problems: \(store.problems)")
        #expect(store[.counter] == 1)
        #expect(contents(url) == garbage)

        // Another process refuses to write over the corrupt file (S8: the
        // default policy, .fail, touches nothing) and says why.
        let why = #expect(throws: PreferencesError.self) {
            try StoreDocument.decode(Array(garbage.utf8), file: url.path, limits: .init())
        }
        let child = try await runChild("prefs-harness", ["set-once", url.path, "counter", "2"])
        #expect(child.status == 1, "set-once on a corrupt file: \(child.standardError)")
        #expect(child.standardOutput == "")
        #expect(child.standardError == "prefs-harness: \(why.map { "\($0)" } ?? "?")\n")
        #expect(contents(url) == garbage, "the refused write changed the corrupt file")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.filter { $0.contains("corrupt") }.isEmpty, "set aside: \(names)")

        try replaceAtomically(url, with: storeFile(#"{ "counter" : 3 }"#))
        #expect(await feed.next(3) == 3)
        #expect(await problems.next([]) == [])
        #expect(store.problems.isEmpty)
        #expect(!feed.values.contains(0), "the corrupt file must not read as empty: \(feed.values)")
    }

    @Test func aSymlinkedFileIsWatchedAtItsTarget() async throws {
        let linkDirectory = try TemporaryDirectory()
        let targetDirectory = try TemporaryDirectory()
        let target = targetDirectory.file("real.json")
        let link = linkDirectory.file("prefs.json")
        try write(storeFile(#"{ "counter" : 1 }"#), to: target)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let store = try await PreferencesStore(fileURL: link)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(1) == 1)

        // Another process writes through the target's own path.
        let result = try await runChild(
            "prefs-harness", ["increment", target.path, "counter", "1"])
        #expect(result.status == 0)
        #expect(await feed.next(2) == 2)

        // The link is pointed at another file.
        let other = targetDirectory.file("other.json")
        try write(storeFile(#"{ "counter" : 7 }"#), to: other)
        let newLink = linkDirectory.file("new-link")
        try FileManager.default.createSymbolicLink(at: newLink, withDestinationURL: other)
        try Platform.rename(newLink.path, link.path)
        #expect(await feed.next(7) == 7)
        try replaceAtomically(other, with: storeFile(#"{ "counter" : 8 }"#))
        #expect(await feed.next(8) == 8)
    }

    @Test func aDirectoryThatAppearsLaterIsWatchedToo() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("not-yet/prefs.json")
        let store = try await PreferencesStore(fileURL: url)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(0) == 0)
        let result = try await runChild("prefs-harness", ["increment", url.path, "counter", "3"])
        #expect(result.status == 0)
        #expect(await feed.next(3) == 3)
    }

    @Test func aRemovedAndRecreatedDirectoryKeepsTheFeedGoing() async throws {
        let parent = try TemporaryDirectory()
        let folder = parent.url.appendingPathComponent("settings")
        let url = folder.appendingPathComponent("prefs.json")
        // No live reads: their replica registration, made in the folder a
        // moment after the open, could land during the removal below.
        let store = try await PreferencesStore(fileURL: url, liveReads: false)
        try await store.set(.counter, 4)
        let feed = FeedRecorder(store.changes(.counter))
        #expect(await feed.next(4) == 4)
        try FileManager.default.removeItem(at: folder)
        #expect(await feed.next(0) == 0)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try write(storeFile(#"{ "counter" : 5 }"#), to: url)
        #expect(await feed.next(5) == 5)
    }

    static let hasInotify = FileManager.default.fileExists(atPath: "/proc/sys/fs/inotify")

    /// A program that creates the file and takes its time writing it (a
    /// busy machine, a large file) is reported once, when it closes the
    /// file: not half-written at creation, and not again afterwards.
    ///
    /// A second watcher, on `probe.json` in the same directory, orders the
    /// steps on the watchers' one queue. The file is created and held open,
    /// then the probe deleted. The probe's deletion is reported after the
    /// 25 ms pause an event in the middle of a save gets, and that report
    /// writes and closes the file: so the watcher has had the creation for
    /// at least that pause, and one that gave a creation no more would have
    /// reported the empty file first. After the file's report, a link is
    /// made under the probe's name: a creation no close follows, reported
    /// only after the creation pause. A report still pending from the
    /// file's own, earlier creation would come before it; so the reports up
    /// to the probe's link are all there were. The creation pause is 5 s
    /// here (2 s by default), so that a loaded machine that stalls the
    /// watchers' queue cannot outlast it between the close and its event.
    @Test(.enabled(if: hasInotify, "needs inotify's close-after-write events (Linux)"))
    func aFileStillBeingWrittenIsReportedOnlyOnceClosed() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("watched.json")
        let probe = directory.file("probe.json")
        let linked = directory.file("linked.json")
        try write("probe", to: probe)
        try write("linked", to: linked)
        let (signals, continuation) = AsyncStream<String>.makeStream()
        let writer = Locked<Int32?>(nil)
        let watcher = try FileWatcher.start(
            path: url.path, using: .native, createdSettle: .seconds(5)
        ) {
            continuation.yield("watched: \(contents(url) ?? "(missing)")")
        }
        defer { watcher.cancel() }
        let prober = try FileWatcher.start(
            path: probe.path, using: .native, createdSettle: .seconds(5)
        ) {
            continuation.yield("probe: \(contents(probe) ?? "(missing)")")
            // The writer finishes, once: it writes the file and closes it.
            guard let descriptor = writer.withLock({ $0.take() }) else { return }
            let text = Array("complete".utf8)
            _ = write(descriptor, text, text.count)
            close(descriptor)
        }
        defer { prober.cancel() }
        try #require(!watcher.usesPolling && !prober.usesPolling, "no inotify watch to be had")
        let seen = FeedRecorder(signals)

        let descriptor = open(url.path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0, "cannot create \(url.path): errno \(errno)")
        writer.withLock { $0 = descriptor }
        defer { writer.withLock { $0.take() }.map { _ = close($0) } }
        try FileManager.default.removeItem(at: probe)
        #expect(
            await seen.next("watched: complete") != nil,
            "the closed file was not reported: \(seen.values)")

        #expect(link(linked.path, probe.path) == 0)
        #expect(
            await seen.next("probe: linked") != nil,
            "the link under the probe's name was not reported: \(seen.values)")
        #expect(seen.values == ["probe: (missing)", "watched: complete", "probe: linked"])
    }

    /// A file made as a hard link under the watched name (no close follows)
    /// is still reported.
    @Test(.enabled(if: hasInotify, "needs inotify's close-after-write events (Linux)"))
    func aFileLinkedUnderTheNameIsReported() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("watched.json")
        let elsewhere = directory.file("elsewhere.json")
        try write("linked", to: elsewhere)
        let (signals, continuation) = AsyncStream<String>.makeStream()
        let watcher = try FileWatcher.start(path: url.path, using: .native) {
            continuation.yield(contents(url) ?? "(missing)")
        }
        defer { watcher.cancel() }
        let seen = FeedRecorder(signals)
        #expect(link(elsewhere.path, url.path) == 0)
        #expect(await seen.next("linked") != nil, "the link was not reported: \(seen.values)")
    }

    /// Both mechanisms notice every kind of change to the name; each
    /// callback here reports what the file holds at that moment.
    @Test(arguments: [FileWatcher.Mechanism.native, .polling])
    func theWatcherSeesReplacesDeletesAndRecreation(mechanism: FileWatcher.Mechanism) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("watched.json")
        let (signals, continuation) = AsyncStream<String>.makeStream()
        let watcher = try FileWatcher.start(path: url.path, using: mechanism) {
            continuation.yield(contents(url) ?? "(missing)")
        }
        defer { watcher.cancel() }
        #expect(watcher.usesPolling == (mechanism == .polling))
        let seen = FeedRecorder(signals)

        try write("one", to: url)
        #expect(await seen.next("one") != nil)
        try replaceAtomically(url, with: "two, longer")
        #expect(await seen.next("two, longer") != nil)
        try FileManager.default.removeItem(at: url)
        #expect(await seen.next("(missing)") != nil)
        try write("three", to: url)
        #expect(await seen.next("three") != nil)
        watcher.cancel()
        continuation.finish()
        if mechanism == .native {
            // A poll may land between create and write; the native watch waits for the close.
            #expect(!seen.values.contains(""), "a half-written file was reported: \(seen.values)")
        }
    }
}
