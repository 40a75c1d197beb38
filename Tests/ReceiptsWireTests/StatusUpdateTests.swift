import ReceiptsCore
import ReceiptsWire
import Testing

struct StatusUpdateTests {
    @Test func roundTripsRandomUpdates() throws {
        var random = SeededGenerator(seed: 20)
        for _ in 0..<500 {
            let update = StatusUpdate(epoch: random.uint64(), sequence: random.uint64(), status: random.messageStatus())
            #expect(try StatusUpdate.decode(update.encode()) == update)
        }
    }

    @Test(arguments: [ReceiptStatus.none, .notDelivered, .delivered, .readBySome, .read, .readByAll])
    func roundTripsEveryStatus(status: ReceiptStatus) throws {
        var random = SeededGenerator(seed: UInt64(status.rawValue))
        var messageStatus = random.messageStatus()
        messageStatus.status = status
        let update = StatusUpdate(epoch: 1, sequence: 2, status: messageStatus)
        #expect(try StatusUpdate.decode(update.encode()) == update)
    }

    /// The proto numbers differ from ReceiptStatus's Swift order; pin them.
    @Test(arguments: [
        (UInt64(1), ReceiptStatus.notDelivered), (2, .delivered), (3, .read), (4, .readBySome), (5, .readByAll),
        (6, .none), (0, .none), (7, .none), (UInt64.max, .none),
    ])
    func statusNumbersFollowTheProto(number: UInt64, status: ReceiptStatus) throws {
        let frame = ProtoWriter.build { update in
            update.string(field: 1, "c")
            update.message(field: 4) { $0.varint(field: 6, number) }
        }
        #expect(try StatusUpdate.decode(frame).status.status == status)
    }

    @Test func conversationComesFromTheUpdateWhenTheStatusLacksIt() throws {
        let frame = ProtoWriter.build { update in
            update.string(field: 1, "conv")
            update.varint(field: 2, 9)
            update.varint(field: 3, 10)
        }
        let update = try StatusUpdate.decode(frame)
        #expect(update.status.conversation == "conv")
        #expect(update.epoch == 9)
        #expect(update.sequence == 10)
        #expect(update.status.sentAt == Timestamp(milliseconds: 0))
        #expect(update.status.deliveredAt == nil)
    }

    @Test func countsBeyondUInt32AreClamped() throws {
        var random = SeededGenerator(seed: 21)
        var status = random.messageStatus()
        status.recipientCount = Int.max
        status.deliveredCount = -1
        let decoded = try StatusUpdate.decode(StatusUpdate(epoch: 1, sequence: 1, status: status).encode())
        #expect(decoded.status.recipientCount == Int(UInt32.max))
        #expect(decoded.status.deliveredCount == 0)
    }

    @Test func hostileFramesNeverCrash() {
        var random = SeededGenerator(seed: 22)
        let valid = StatusUpdate(epoch: 3, sequence: 4, status: random.messageStatus()).encode()
        for length in 0..<valid.count {
            _ = try? StatusUpdate.decode(Array(valid[..<length]))
        }
        for _ in 0..<5_000 {
            let frame = (0..<Int.random(in: 0...48, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? StatusUpdate.decode(frame)
        }
        #expect(throws: WireError.self) { try StatusUpdate.decode([0x22, 0x05, 0x30]) }
    }
}
