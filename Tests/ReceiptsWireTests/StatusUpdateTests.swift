import ReceiptsCore
import ReceiptsWire
import Testing

struct StatusUpdateTests {
    @Test func roundTripsRandomUpdates() throws {
        var random = SeededGenerator(seed: 20)
        for _ in 0..<500 {
            let update = StatusUpdate(
                publisherRun: random.uint64(),
                sequence: random.uint64(),
                status: random.messageStatus()
            )
            #expect(try StatusUpdate.decode(update.encode()) == update)
        }
    }

    @Test(arguments: [ReceiptStatus.none, .notDelivered, .delivered, .readBySome, .read, .readByAll])
    func roundTripsEveryStatus(status: ReceiptStatus) throws {
        var random = SeededGenerator(seed: UInt64(status.rawValue))
        var messageStatus = random.messageStatus()
        messageStatus.status = status
        let update = StatusUpdate(publisherRun: 1, sequence: 2, status: messageStatus)
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
        #expect(update.publisherRun == 9)
        #expect(update.sequence == 10)
        #expect(update.status.sentAt == Timestamp(milliseconds: 0))
        #expect(update.status.deliveredAt == nil)
    }

    @Test func countsBeyondUInt32AreClamped() throws {
        var random = SeededGenerator(seed: 21)
        var status = random.messageStatus()
        status.recipientCount = Int.max
        status.deliveredCount = -1
        let decoded = try StatusUpdate.decode(StatusUpdate(publisherRun: 1, sequence: 1, status: status).encode())
        #expect(decoded.status.recipientCount == Int(UInt32.max))
        #expect(decoded.status.deliveredCount == 0)
    }

    @Test func hostileFramesNeverCrash() {
        var random = SeededGenerator(seed: 22)
        let valid = StatusUpdate(publisherRun: 3, sequence: 4, status: random.messageStatus()).encode()
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

    /// A status with every field at its widest (10-byte varints for the negative times and the
    /// 64-bit numbers, every count at `UInt32.max`, every flag set), encoded by hand.
    static func widestStatus(idLength: Int) -> MessageStatus {
        MessageStatus(
            conversation: String(repeating: "c", count: idLength),
            message: String(repeating: "é", count: idLength),
            sequence: .max,
            sender: String(repeating: "🙂", count: idLength),
            sentAt: Timestamp(milliseconds: -1),
            status: .readByAll,
            recipientCount: Int(UInt32.max),
            deliveredCount: Int(UInt32.max),
            readCount: Int(UInt32.max),
            deliveredAt: Timestamp(milliseconds: .min),
            readAt: Timestamp(milliseconds: -2),
            isSystem: true,
            isEdited: true,
            isDeleted: true
        )
    }

    static func expectedBytes(_ update: StatusUpdate) -> [UInt8] {
        let status = update.status
        return ProtoWriter.build { writer in
            writer.string(field: 1, status.conversation)
            writer.varint(field: 2, update.publisherRun)
            writer.varint(field: 3, update.sequence)
            writer.message(field: 4) { m in
                m.string(field: 1, status.conversation)
                m.string(field: 2, status.message)
                m.varint(field: 3, status.sequence)
                m.string(field: 4, status.sender)
                m.varint(field: 5, UInt64(bitPattern: status.sentAt.milliseconds))
                m.varint(field: 6, 5)  // READ_BY_ALL
                m.varint(field: 7, UInt64(status.recipientCount))
                m.varint(field: 8, UInt64(status.deliveredCount))
                m.varint(field: 9, UInt64(status.readCount))
                m.varint(field: 10, UInt64(bitPattern: status.deliveredAt?.milliseconds ?? 0))
                m.varint(field: 11, UInt64(bitPattern: status.readAt?.milliseconds ?? 0))
                m.varint(field: 12, 1)
                m.varint(field: 13, 1)
                m.varint(field: 14, 1)
            }
        }
    }

    /// The encoder packs into room it computes up front instead of asking protobuf-c for the
    /// size; the widest values must still come out whole and byte for byte as the rules say,
    /// from ids of one byte to ids far past the 1 KiB stack block.
    @Test(arguments: [1, 100, 300, 5_000, 100_000])
    func encodesTheWidestValuesByteForByte(idLength: Int) throws {
        let update = StatusUpdate(publisherRun: .max, sequence: .max, status: Self.widestStatus(idLength: idLength))
        let bytes = update.encode()
        #expect(bytes == Self.expectedBytes(update))
        #expect(try StatusUpdate.decode(bytes) == update)
    }

    @Test func embeddedNULEndsAnEncodedString() throws {
        var random = SeededGenerator(seed: 23)
        var status = random.messageStatus()
        status.conversation = "conv\u{0}tail"
        status.message = "\u{0}"
        let decoded = try StatusUpdate.decode(StatusUpdate(publisherRun: 1, sequence: 1, status: status).encode())
        #expect(decoded.status.conversation == "conv")
        #expect(decoded.status.message == "")
        #expect(decoded.status.sender == status.sender)
    }
}
