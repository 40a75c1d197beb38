import Foundation
import Logging
import ReceiptsCore
import Testing

@testable import ReceiptsClient

/// The gateway-side outbox on real files: what survives a reopen, and compaction.
struct OutboxTests {
    private static func directory() -> String {
        NSTemporaryDirectory() + "outbox-\(UUID().uuidString.prefix(8))"
    }

    private static func events(_ source: String, _ sequences: ClosedRange<UInt64>) -> [Event] {
        sequences.map { sequence in
            Event(
                id: EventID(source: source, sequence: sequence),
                kind: .messageSent(conversation: "c", message: "m\(sequence)", sender: "a", isSystem: false)
            )
        }
    }

    @Test func unansweredEventsAndTheSequenceSurviveAReopen() async throws {
        let path = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let outbox = try Outbox(directory: path, source: "gw", firstSequence: 1, logger: Logger(label: "test"))
            try await outbox.durability.wait(for: outbox.append(Self.events("gw", 1...10)))
            outbox.answered((1...4).map { EventID(source: "gw", sequence: $0) })
            #expect(outbox.unanswered == 6)
            outbox.close()
        }
        let reopened = try Outbox(directory: path, source: "gw", firstSequence: 1, logger: Logger(label: "test"))
        #expect(reopened.recovered == Self.events("gw", 5...10))
        #expect(reopened.nextSequence == 11)
        reopened.close()
    }

    @Test func compactionKeepsOnlyWhatIsUnanswered() async throws {
        let path = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let outbox = try Outbox(
                directory: path,
                source: "gw",
                firstSequence: 1,
                compactionBytes: 4096,
                logger: Logger(label: "test")
            )
            for block in 0..<20 {
                let first = UInt64(block * 50 + 1)
                try await outbox.durability.wait(for: outbox.append(Self.events("gw", first...(first + 49))))
                outbox.answered((first...(first + 49)).map { EventID(source: "gw", sequence: $0) })
                while outbox.isCompacting { try await Task.sleep(for: .milliseconds(5)) }
            }
            try await outbox.durability.wait(for: outbox.append(Self.events("gw", 1001...1003)))
            outbox.close()
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: path)
        #expect(files.contains { $0.hasPrefix("snapshot-") }, "nothing was compacted: \(files)")
        let reopened = try Outbox(directory: path, source: "gw", firstSequence: 1, logger: Logger(label: "test"))
        #expect(reopened.recovered == Self.events("gw", 1001...1003))
        #expect(reopened.nextSequence == 1004)
        reopened.close()
    }

    @Test func enqueueNeedsAnOutbox() async throws {
        let client = try ReceiptsClient(
            .init(cluster: Cluster(workers: [.init(dataDirectory: "/nonexistent")])),
            logger: Logger(label: "test")
        )
        await #expect(throws: ReceiptsClientError.self) {
            try await client.enqueue([.userDeleted(user: "u")])
        }
        await client.shutdown()
    }

    @Test func configurationThatCannotWorkIsRefused() {
        var configuration = ReceiptsClient.Configuration(cluster: Cluster(workers: []))
        #expect(throws: ReceiptsClientError.self) { try ReceiptsClient(configuration, logger: Logger(label: "test")) }
        configuration.cluster = Cluster(workers: [.init(dataDirectory: "/nonexistent")])
        configuration.maxBatchEvents = 0
        #expect(throws: ReceiptsClientError.self) { try ReceiptsClient(configuration, logger: Logger(label: "test")) }
    }

    @Test func templateNamesEachOrdinal() {
        let cluster = Cluster(
            workerCount: 3,
            ingest: "tcp://receiptd-{index}.receiptd:7001",
            query: "tcp://receiptd-{index}.receiptd:7004",
            publish: "tcp://receiptd-{index}.receiptd:7003"
        )
        #expect(cluster.workers.map(\.ingest) == (0..<3).map { "tcp://receiptd-\($0).receiptd:7001" })
        #expect(cluster.workers[2].publish == "tcp://receiptd-2.receiptd:7003")
    }
}
