import Foundation
import Logging
import Testing

@testable import ReceiptsClient

/// What an operator sees in `top -H`, `ps -L` or a debugger of a gateway process: the client's
/// threads by role, named as receiptd's are.
struct ClientThreadNameTests {
    /// The names of this process's threads.
    private static func threadNames() throws -> [String] {
        let tasks = "/proc/self/task"
        return try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { task in
            // A thread may end between the listing and the read.
            try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// The loop names itself as it starts, which may trail `init` by a moment: the names are
    /// read until it is there, for up to 5 seconds.
    @Test func theLoopThreadIsNamed() async throws {
        let cluster = Cluster(workers: [.init(dataDirectory: "/nonexistent-\(UUID().uuidString.prefix(8))")])
        let client = try ReceiptsClient(.init(cluster: cluster), logger: Logger(label: "test"))
        let deadline = ContinuousClock.now + .seconds(5)
        var names = try Self.threadNames()
        while !names.contains("receipts-client"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            names = try Self.threadNames()
        }
        #expect(names.contains("receipts-client"), "\(names)")
        await client.shutdown()
    }
}
