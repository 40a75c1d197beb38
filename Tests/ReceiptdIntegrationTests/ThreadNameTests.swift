import Foundation
import Testing

/// What an operator sees in `top -H`, `ps -L` or a debugger: receiptd's own threads by role.
@Suite
struct ThreadNameTests {
    @Test func theWorkerTheLogWriterAndThePublisherAreNamed() throws {
        let daemon = try ReceiptdProcess()
        let names = try daemon.threadNames()
        for role in ["receiptd-worker", "log-writer", "receiptd-pub"] {
            #expect(names.filter { $0 == role }.count == 1, "\(role) in \(names)")
        }
    }
}
