import Foundation
import ReceiptsCore
import Testing

/// The routing function gateways and workers share.
struct PartitioningTests {
    @Test func stableHashIsFNV1a64() {
        #expect(Partitioning.stableHash("") == 0xcbf2_9ce4_8422_2325)
        #expect(Partitioning.stableHash("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(Partitioning.stableHash("foobar") == 0x8594_4171_f739_67e8)
    }

    @Test func jumpHashMatchesThePaper() {
        // Reference values computed with the paper's C++ code over FNV-1a 64 of the id.
        let reference: [(String, [Int])] = [
            ("conversation-1", [0, 3, 3, 111]), ("conversation-2", [1, 1, 1, 248]), ("g", [0, 4, 6, 260]),
            ("ab", [1, 2, 2, 102]), ("team-chat", [0, 4, 4, 251]),
        ]
        for (id, owners) in reference {
            #expect([2, 5, 10, 1000].map { Partitioning.owner(of: id, workerCount: $0) } == owners)
        }
        #expect(Partitioning.stableHash("team-chat") == 0x6095_f7a8_7403_7b6d)
        #expect(Partitioning.owner(of: "x", workerCount: 1) == 0)
        #expect(Partitioning.owner(of: "x", workerCount: 0) == 0)
        let ids = (0..<10_000).map { "conversation-\($0)" }
        for workers in [2, 3, 7, 16] {
            var counts = [Int](repeating: 0, count: workers)
            for id in ids { counts[Partitioning.owner(of: id, workerCount: workers)] += 1 }
            let expected = ids.count / workers
            #expect(counts.allSatisfy { abs($0 - expected) < expected / 5 })
        }
        // Growing from n to n+1 workers only moves conversations to the new worker.
        for workers in 1..<8 {
            for id in ids.prefix(2000) {
                let before = Partitioning.owner(of: id, workerCount: workers)
                let after = Partitioning.owner(of: id, workerCount: workers + 1)
                #expect(after == before || after == workers)
            }
        }
    }

    @Test func topicHasAFixedWidthPartitionPrefix() {
        for id in ["", "a", "conversation-42", "日本語"] {
            let topic = Partitioning.topic(for: id)
            #expect(topic == String(format4: UInt64(Partitioning.partition(of: id))) + ":" + id)
            #expect(topic.prefix(4).allSatisfy { "0123456789abcdef".contains($0) })
        }
    }

    /// Topics computed by `receipts_routing_topic` (CReceiptsRouting, the C version gateways
    /// link) for the same ids: the two must agree byte for byte.
    @Test(arguments: [
        ("", "efd0:"), ("a", "82a2:a"), ("c-demo-1", "03c0:c-demo-1"), ("c-demo-2", "6761:c-demo-2"),
        ("c-demo-6", "81d0:c-demo-6"), ("conversation-42", "002e:conversation-42"), ("team-chat", "b569:team-chat"),
        ("日本語", "e115:日本語"),
    ])
    func topicMatchesTheCRoutingFunction(id: String, topic: String) {
        #expect(Partitioning.topic(for: id) == topic)
    }

    @Test func partitionsOfSimilarIdsSpread() {
        // Ids that differ only in their last characters land in different partitions: 10,000
        // sequential ids are expected to fill about 9,270 of the 65,536 (random placement);
        // FNV-1a's top 16 bits alone gave about 1,000.
        for pattern in ["conversation-", "c-"] {
            let partitions = Set((0..<10_000).map { Partitioning.partition(of: "\(pattern)\($0)") })
            #expect(partitions.count > 9_000)
        }
        let demo = Set((1...6).map { Partitioning.partition(of: "c-demo-\($0)") })
        #expect(demo.count == 6)
        // Ownership still uses the raw hash.
        #expect(Partitioning.owner(of: "c-demo-1", workerCount: 10) == 7)
        #expect(Partitioning.owner(of: "team-chat", workerCount: 10) == 4)
    }
}

extension String {
    /// Four lowercase hex digits.
    init(format4 value: UInt64) {
        let digits = String(value, radix: 16)
        self = String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// The routing test vectors README.md publishes for gateways in other languages must be what
/// the workers compute.
struct PublishedRoutingVectorsTests {
    @Test func readmeTableMatchesPartitioning() throws {
        let readme = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let section = text.range(of: "### Routing test vectors") else {
            Issue.record("README.md has no routing test vectors section")
            return
        }
        let rows = text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }.filter { $0.hasPrefix("| `") }
        #expect(rows.count >= 5, "README.md lost its routing vectors")
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "`")) }
            guard cells.count == 8 else {
                Issue.record("malformed vector row: \(row)")
                continue
            }
            let id = cells[0]
            #expect(String(Partitioning.stableHash(id), radix: 16).leftPadded(to: 16) == cells[1], "\(id)")
            for (column, workers) in [2, 3, 5, 10, 1000].enumerated() {
                #expect(
                    String(Partitioning.owner(of: id, workerCount: workers)) == cells[2 + column],
                    "\(id) n=\(workers)"
                )
            }
            #expect(Partitioning.topic(for: id) == cells[7], "\(id)")
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(width - count, 0)) + self
    }
}
