// prefs-bench: measures Preferences against Foundation's UserDefaults, the
// hand-rolled JSONEncoder + atomic write, and the durable-replace floor, in
// one run, as ratios (P1–P12 in Sources/Preferences/Preferences.docc/Performance.md).
//
//   swift run -c release prefs-bench [--quick] [--json] [--only P2,P3] [--prefs PATH]
//   swift run -c release prefs-bench --scaling [--chart scaling.svg]
//   swift run -c release prefs-bench --profile-cold 2000   (for a profiler)
//   swift run -c release prefs-bench --profile-import 10   (P7 imports, for a profiler)
//   swift run -c release prefs-bench --profile-concurrent 7 [--plain|--baseline|--held MS|--serial]   (P3 rounds taken apart)
import Foundation

// The run is a task the main thread waits for. With `await` at the top
// level, the main thread would park in `dispatch_main`, where valgrind (the
// profiler the README's instruction counts come from) stops with an
// internal error.
let finished = DispatchSemaphore(value: 0)
Task.detached {
    do {
        try await runBench()
    } catch {
        FileHandle.standardError.write(Data("prefs-bench: error: \(error)\n".utf8))
        exit(1)
    }
    finished.signal()
}
finished.wait()
