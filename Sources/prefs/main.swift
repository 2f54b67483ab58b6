import Foundation
import PrefsCLI

let status = await PrefsTool().run(Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
