import ReceiptsCore
import ReceiptsWire
import Testing

struct QueryReplyTests {
    @Test func roundTripsRandomRepliesOfEveryKind() throws {
        var random = SeededGenerator(seed: 40)
        for _ in 0..<1_000 {
            let reply = random.queryReply()
            #expect(try QueryReply.decode(reply.encode()) == reply)
        }
    }

    @Test func roundTripsEveryErrorCode() throws {
        for code in SeededGenerator.errorCodes {
            let reply = QueryReply.error(
                ErrorReply(code: code, message: "\(code)", ownerWorker: code == .notOwner ? 2 : nil)
            )
            #expect(try QueryReply.decode(reply.encode()) == reply)
        }
    }

    @Test func roundTripsEmptyCollections() throws {
        let status = MessageStatus(
            conversation: "c",
            message: "m",
            sequence: 1,
            sender: "a",
            sentAt: Timestamp(milliseconds: 5),
            status: .none,
            recipientCount: 0,
            deliveredCount: 0,
            readCount: 0,
            deliveredAt: nil,
            readAt: nil,
            isSystem: true,
            isEdited: false,
            isDeleted: false
        )
        let replies: [QueryReply] = [
            .unreadCounts([]),
            .stats([]),
            .readDetail(ReadDetail(status: status, read: [], delivered: [], notDelivered: [])),
            .snapshot(
                ConversationSnapshot(conversation: "c", kind: .direct, members: [], messages: []),
                publisherRun: 0,
                sequence: 0
            ),
        ]
        for reply in replies {
            #expect(try QueryReply.decode(reply.encode()) == reply)
        }
    }

    @Test func replyWithNoKindIsUnknownKind() {
        #expect(throws: WireError(code: .unknownKind, message: "QueryReply has no kind this build knows")) {
            try QueryReply.decode([])
        }
    }

    @Test(arguments: [0, 3, 1000])
    func snapshotOfAnUnknownConversationKindIsAnInvalidField(kind: UInt64) {
        let frame = ProtoWriter.build { reply in
            reply.message(field: 5) { snapshot in
                snapshot.string(field: 1, "c")
                snapshot.varint(field: 2, kind)
            }
        }
        #expect(throws: WireError(code: .invalidField, message: "ConversationSnapshot.kind \(kind) is not known")) {
            try QueryReply.decode(frame)
        }
    }

    @Test(arguments: [0, 4, 99])
    func unknownRecipientStateReadsAsNotDelivered(state: UInt64) throws {
        let frame = ProtoWriter.build { reply in
            reply.message(field: 2) { detail in
                detail.message(field: 4) { receipt in
                    receipt.string(field: 1, "bob")
                    receipt.varint(field: 2, state)
                }
            }
        }
        guard case .readDetail(let detail) = try QueryReply.decode(frame) else {
            Issue.record("expected a read detail")
            return
        }
        #expect(detail.notDelivered.map(\.state) == [.notDelivered])
        #expect(detail.status.conversation == "")
    }

    @Test(arguments: [0, 12, 12345])
    func unknownErrorCodeReadsAsInternal(code: UInt64) throws {
        let frame = ProtoWriter.build { reply in
            reply.message(field: 9) { error in
                error.varint(field: 1, code)
                error.string(field: 2, "something new")
                error.varint(field: 3, 4)
            }
        }
        #expect(try QueryReply.decode(frame) == .error(ErrorReply(code: .internal, message: "something new")))
    }

    @Test func displayTextTravelsWithTheStatus() throws {
        var random = SeededGenerator(seed: 41)
        let status = random.messageStatus()
        let reply = QueryReply.lastSent(status, displayText: "Read at 5:42 PM")
        #expect(try QueryReply.decode(reply.encode()) == reply)
    }

    @Test func hostileFramesNeverCrash() {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<50 {
            let valid = random.queryReply().encode()
            for length in 0..<valid.count {
                _ = try? QueryReply.decode(Array(valid[..<length]))
            }
        }
        for _ in 0..<3_000 {
            var frame = random.queryReply().encode()
            guard !frame.isEmpty else { continue }
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                frame[Int.random(in: 0..<frame.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = try? QueryReply.decode(frame)
        }
    }
}
