import Dispatch
import Foundation
import Logging
import Testing

@testable import ReceiptLog
@testable import ReceiptsService

/// The durability frontier, the one position the pipeline gates replies and updates on: it
/// covers a record once the log has synced it, and not while the record is only written.
@Suite struct DurabilityFrontierTests {
    @Test func coversARecordOnceSyncedAndNotBefore() throws {
        var template = Array("/tmp/receipt-frontier-test-XXXXXX".utf8CString)
        guard let root = mkdtemp(&template).map({ String(cString: $0) }) else { throw POSIXError(.EIO) }
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The writer syncs the second group only once the test lets it.
        let arrived = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        var configuration = LogConfiguration(directory: root + "/log")
        configuration.faultInjection = FaultInjection { syncs in
            if syncs == 1 {
                arrived.signal()
                release.wait()
            }
            return nil
        }
        let log = try ReceiptLog(
            configuration: configuration,
            logger: Logger(label: "frontier-test", factory: { _ in SwiftLogNoOpLogHandler() }),
            onDurable: {},
            onFatal: { _ in }
        )
        defer { try? log.close() }
        defer { release.signal() }
        let frontier = DurabilityFrontier(log: log)
        #expect(frontier.position == .zero)

        let first = try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try log.append(type: 1, payload: $0) }
        try log.flush()
        #expect(frontier.position == first)

        let second = try [UInt8](repeating: 2, count: 10).withUnsafeBytes { try log.append(type: 1, payload: $0) }
        arrived.wait()
        #expect(log.appendedPosition == second)
        #expect(frontier.position == first, "a written record counts before its sync")
        release.signal()
        try log.flush()
        #expect(frontier.position == second)
    }
}
