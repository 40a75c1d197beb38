import Foundation
import ReceiptsCore
import Testing

@testable import ReceiptsFuzzing

/// The committed corpus: every input in it (seeds and every crash a fuzzer found) keeps its
/// target's invariants, and the seeds are what `SeedCorpus` makes.
struct CorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    static func inputs(of target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        let folder = corpus.appendingPathComponent(target.rawValue)
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            (name, [UInt8](try Data(contentsOf: folder.appendingPathComponent(name))))
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyCommittedInputKeepsTheInvariants(_ target: FuzzTarget) throws {
        let inputs = try Self.inputs(of: target)
        #expect(inputs.count >= SeedCorpus.seeds(for: target).count)
        for (name, bytes) in inputs {
            #expect(throws: Never.self, "\(target.rawValue)/\(name)") { try target.run(bytes) }
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func theCommittedSeedsAreFresh(_ target: FuzzTarget) throws {
        let committed = Dictionary(uniqueKeysWithValues: try Self.inputs(of: target).map { ($0.name, $0.bytes) })
        for (name, bytes) in SeedCorpus.seeds(for: target) {
            let isFresh = committed[name] == bytes
            #expect(
                isFresh,
                "Corpus/\(target.rawValue)/\(name) is stale: run receipts-fuzz seeds Tests/ReceiptsFuzzingTests/Corpus"
            )
        }
    }

    @Test func theEngineSeedsSendAndReadInBothConversations() {
        let group = EngineTarget.state(after: SeedCorpus.scripts[0].1)
        let direct = EngineTarget.state(after: SeedCorpus.scripts[1].1)
        #expect(group.status(conversation: "g", message: "m0")?.status == .readBySome)
        #expect(group.readDetail(conversation: "g", message: "m0")?.read.map(\.user) == ["D", "C"])
        #expect(direct.status(conversation: "d", message: "m0")?.status == .read)
    }

    @Test func sealedSnapshotSeedsReachTheDecoderBehindTheChecksum() throws {
        for (name, bytes) in SeedCorpus.seeds(for: .snapshot) where bytes.first == 0 {
            let restored = try ReceiptEngine(
                restoringFrom: ReceiptEngine.sealedSnapshot(body: bytes.dropFirst()),
                configuration: SnapshotTarget.configuration
            )
            #expect(!restored.heldIDs.conversations.isEmpty, "\(name)")
        }
    }
}
