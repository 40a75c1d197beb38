import Foundation
import ReceiptsTestTraits
import Testing

/// What an operator sees in `top -H`, `ps -L` or a debugger: receiptd's own threads by role.
@Suite(.startsProcesses)
struct ThreadNameTests {
    /// Each thread names itself as it starts, which may trail "ready" by a moment: the names
    /// are read until they are all there, for up to 5 seconds.
    @Test func theWorkerTheLogWriterAndThePublisherAreNamed() async throws {
        let daemon = try await ReceiptdProcess()
        let roles = ["receiptd-worker", "log-writer", "receiptd-pub"]
        let deadline = Date().addingTimeInterval(5)
        var names = try daemon.threadNames()
        while roles.contains(where: { !names.contains($0) }), Date() < deadline {
            usleep(20_000)
            names = try daemon.threadNames()
        }
        for role in roles {
            #expect(names.filter { $0 == role }.count == 1, "\(role) in \(names)")
        }
    }
}
