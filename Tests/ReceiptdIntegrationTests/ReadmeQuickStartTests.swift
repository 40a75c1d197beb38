import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import Testing

/// The Swift gateway quick start in README.md: its lines run in process, and its two blocks
/// (`Package.swift` and `main.swift`) are built as a package outside this repository, as a new
/// user would, and run against a real daemon.
@Suite(.serialized, .startsProcesses)
struct ReadmeQuickStartTests {
    /// README.md's `swift` code blocks.
    private static func readmeSwiftBlocks() throws -> [String] {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        return readme.components(separatedBy: "```swift\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
    }

    private static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a command to its end within `seconds`, with its output in a file.
    /// - Returns: its exit status and output.
    private static func run(
        _ arguments: [String],
        in directory: String,
        seconds: Double
    ) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        return try await process.runToEnd(outputPath: directory + "/command.out", seconds: seconds)
    }

    @Test(.timeLimit(.minutes(10)))
    func gatewayPackageBuildsOutsideTheRepositoryAndRuns() async throws {
        let blocks = try Self.readmeSwiftBlocks()
        let manifest = try #require(
            blocks.first { $0.hasPrefix("// swift-tools-version") },
            "README shows no Package.swift for a gateway"
        )
        let main = try #require(
            blocks.first { $0.hasPrefix("import Logging\nimport ReceiptsClient") },
            "README shows no gateway quick start"
        )
        // The README's layout: this repository checked out as `receiptd` beside the gateway.
        let root = try TemporaryDirectory.make(prefix: "rdqs")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createSymbolicLink(
            atPath: root + "/receiptd",
            withDestinationPath: Self.repositoryRoot.path
        )
        let gateway = root + "/gateway"
        try FileManager.default.createDirectory(atPath: gateway + "/Sources/gateway", withIntermediateDirectories: true)
        try manifest.write(toFile: gateway + "/Package.swift", atomically: true, encoding: .utf8)
        try main.write(toFile: gateway + "/Sources/gateway/main.swift", atomically: true, encoding: .utf8)

        let build = try await Self.run(["swift", "build"], in: gateway, seconds: 540)
        #expect(build.status == 0, "the gateway package does not build: \(build.output.suffix(3000))")
        guard build.status == 0 else { return }

        // The quick start finds the daemon by its data directory, `receiptd-data` beside it.
        try FileManager.default.createDirectory(atPath: gateway + "/receiptd-data", withIntermediateDirectories: false)
        let daemon = try await ReceiptdProcess(dataDirectory: gateway + "/receiptd-data")
        let run = try await Self.run([gateway + "/.build/debug/gateway"], in: gateway, seconds: 30)
        #expect(run.status == 0, "the gateway failed: \(run.output.suffix(2000))")
        let lines = run.output.split(separator: "\n")
        #expect(lines.contains("Read by all users"), "\(run.output.suffix(2000))")
        #expect(lines.contains("m1"), "no live update of m1: \(run.output.suffix(2000))")
        #expect(daemon.isRunning)  // keeps the daemon alive until here
    }

    @Test func gatewayQuickStart() async throws {
        let daemon = try await ReceiptdProcess()
        let dataDirectory = daemon.dataDirectory
        try await within(20, "the quick start") {
            let client = try ReceiptsClient(
                .init(cluster: Cluster(workers: [.init(dataDirectory: dataDirectory)])),
                logger: Logger(label: "gateway")
            )
            let updates = client.subscribe(to: .conversation("c1"))  // snapshot first, then live, gaps repaired
            _ = try await client.send([
                .conversationUpserted(conversation: "c1", kind: .group, members: ["alice", "bob", "carol"]),
                .messageSent(conversation: "c1", message: "m1", sender: "alice", isSystem: false),
            ])
            for reader in ["bob", "carol"] {
                _ = try await client.send(.read(conversation: "c1", user: reader, message: "m1"))
            }
            let text = try await client.status(of: "m1", in: "c1", viewer: Viewer(user: "alice")).displayText
            #expect(text == "Read by all users")
            var sawReadByAll = false
            for await update in updates where update.status.status == .readByAll {
                sawReadByAll = update.status.message == "m1"
                break
            }
            #expect(sawReadByAll)
            await client.shutdown()
        }
        #expect(daemon.isRunning)  // keeps the daemon alive until here
    }
}
