import Foundation
import Synchronization
import Testing

@testable import ReceiptLog

struct DurabilityTests {
    static let policies: [FsyncPolicy] = [.always, .interval(milliseconds: 2), .none]

    @Test(arguments: policies)
    func onDurableCoversEveryAppend(policy: FsyncPolicy) throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.fsyncPolicy = policy }
        var ends: [LogPosition] = []
        for index in 0..<500 {
            ends.append(try log.append(index))
            if index % 100 == 99 { log.waitUntilDurable(ends.last!) }
        }
        log.waitUntilDurable(ends.last!)
        #expect(log.log.durablePosition == log.log.appendedPosition)
        #expect(log.durableCalls >= 5)
        #expect(zip(ends, ends.dropFirst()).allSatisfy { $0 < $1 })
        try log.log.close()
        #expect(try fixture.replayAll().count == 500)
    }

    @Test(arguments: policies)
    func flushSyncsEverythingWhateverThePolicy(policy: FsyncPolicy) throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.fsyncPolicy = policy }
        let ends = try (0..<100).map { try log.append($0) }
        try log.log.flush()
        #expect(log.log.durablePosition == ends.last)
        #expect(log.log.writer.state.withLock { $0.synced } == ends.last?.offset)
        try log.log.close()
        #expect(try fixture.replayAll().map(\.end) == ends)
    }

    @Test func concurrentAppendersAllBecomeDurableInOrder() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 64 << 10 }
        let threads = 8
        let perThread = 2_000
        let lastEnds = Mutex<[LogPosition]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var last = LogPosition.zero
            for sequence in 0..<perThread {
                var payload = [UInt8](repeating: UInt8(thread), count: 5 + sequence % 40)
                withUnsafeBytes(of: UInt32(sequence).littleEndian) { payload.replaceSubrange(1..<5, with: $0) }
                let end = try! log.append(payload, type: UInt8(thread))
                #expect(end > last)
                last = end
            }
            log.waitUntilDurable(last)
            #expect(log.log.durablePosition >= last)
            lastEnds.withLock { $0.append(last) }
        }
        #expect(lastEnds.withLock { $0.count } == threads)
        try log.log.close()

        var next = [Int](repeating: 0, count: threads)
        for record in try fixture.replayAll() {
            let thread = Int(record.type)
            let sequence = record.payload[1..<5].withUnsafeBytes {
                Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)))
            }
            #expect(sequence == next[thread], "thread \(thread)")
            #expect(record.payload.count == 5 + sequence % 40)
            next[thread] = sequence + 1
        }
        #expect(next == [Int](repeating: perThread, count: threads))
    }

    @Test func backpressureBlocksAppendsInsteadOfGrowingWithoutBound() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.maxPendingBytes = 512 }
        let ends = try (0..<2_000).map { try log.append($0) }
        #expect(log.log.writer.state.withLock { $0.pending.count } <= 512 + 9 + 61)
        log.waitUntilDurable(ends.last!)
        try log.log.close()
        #expect(try fixture.replayAll().map(\.end) == ends)
    }

    @Test func closeSyncsPendingRecordsUnderPolicyNone() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.fsyncPolicy = .none }
        let ends = try (0..<1_000).map { try log.append($0) }
        try log.log.close()
        #expect(log.log.durablePosition == ends.last)
        #expect(try fixture.replayAll().map(\.end) == ends)
    }
}
