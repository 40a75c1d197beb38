import ReceiptsCore
import Testing

/// The snapshot payload: round trips exactly, and no damaged input crashes the decoder.
struct SnapshotTests {
    /// A small state touching every part of the format: members who left, a deleted user, a
    /// private reader, held receipts, edits, expiry, several sources.
    static func richHarness() -> EngineHarness {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        h.direct("ab", "A", "B")
        h.accept(.receiptPrivacy(user: "D", shareReads: false))
        h.send("g", "m1", from: "A")
        h.send("g", "sys", from: "A", system: true)
        h.send("g", "m2", from: "B")
        h.deliver("g", "C", "m2")
        h.read("g", "B", "m1")
        h.read("g", "D", nil)
        h.accept(.memberLeft(conversation: "g", user: "C"))
        h.accept(.memberJoined(conversation: "g", user: "E"))
        h.send("ab", "d1", from: "A")
        h.read("ab", "B", nil)
        h.accept(.messageEdited(conversation: "g", message: "m1"))
        h.accept(.markedUnread(conversation: "g", user: "E"))
        h.accept(.userDeleted(user: "B"))
        #expect(h.apply(.delivered(conversation: "g", user: "E", message: "later")).outcome == .accepted(held: true))
        h.source = "gateway-2"
        h.sequence = 0
        h.send("g", "m3", from: "A")
        return h
    }

    @Test func restoresFromBytesInPlaceAsFromAnArray() throws {
        let bytes = Self.richHarness().engine.encodedState()
        let restored = try bytes.withUnsafeBytes { raw in
            try ReceiptEngine(restoringFrom: raw, configuration: .init())
        }
        #expect(restored.encodedState() == bytes)
        var damaged = bytes
        damaged[damaged.count / 2] ^= 0x01
        let error = #expect(throws: SnapshotDecodingError.self) {
            try damaged.withUnsafeBytes { try ReceiptEngine(restoringFrom: $0, configuration: .init()) }
        }
        #expect(error?.code == .corrupt)
    }

    @Test func snapshotRoundTripAnswersIdentically() throws {
        let h = Self.richHarness()
        let bytes = h.engine.encodedState()
        let restored = try ReceiptEngine(restoringFrom: bytes, configuration: h.engine.configuration)
        #expect(restored.encodedState() == bytes)
        #expect(restored.counters == h.engine.counters)
        for (conversation, messages) in [("g", ["m1", "sys", "m2", "m3"]), ("ab", ["d1"])] {
            #expect(
                restored.snapshot(conversation: conversation, limit: 0)
                    == h.engine.snapshot(conversation: conversation, limit: 0)
            )
            for message in messages {
                #expect(
                    restored.readDetail(conversation: conversation, message: message)
                        == h.engine.readDetail(conversation: conversation, message: message)
                )
            }
        }
        for user in ["A", "B", "C", "D", "E"] {
            #expect(
                restored.unreadCounts(user: user, conversations: [])
                    == h.engine.unreadCounts(user: user, conversations: [])
            )
            #expect(
                restored.lastSent(conversation: "g", sender: user) == h.engine.lastSent(conversation: "g", sender: user)
            )
        }
        // The same further events give the same results, duplicates included.
        var original = h
        var copy = h
        copy.engine = restored
        let further: [EventKind] = [
            .messageSent(conversation: "g", message: "later", sender: "A", isSystem: false),
            .read(conversation: "g", user: "E", message: nil),
            .read(conversation: "g", user: "D", message: nil),
            .memberLeft(conversation: "g", user: "D"),
        ]
        for kind in further {
            #expect(original.apply(kind) == copy.apply(kind))
        }
        copy.sequence = 1
        original.sequence = 1
        #expect(
            original.apply(.memberJoined(conversation: "g", user: "F"))
                == copy.apply(.memberJoined(conversation: "g", user: "F"))
        )
        #expect(original.engine.encodedState() == copy.engine.encodedState())
    }

    @Test func emptyEngineRoundTrips() throws {
        let engine = ReceiptEngine()
        let restored = try ReceiptEngine(restoringFrom: engine.encodedState(), configuration: .init())
        #expect(restored.counters == engine.counters)
        #expect(restored.encodedState() == engine.encodedState())
    }

    @Test func truncatedSnapshotAtEveryOffsetThrows() {
        let bytes = Self.richHarness().engine.encodedState()
        for length in 0..<bytes.count {
            #expect(throws: SnapshotDecodingError.self) {
                _ = try ReceiptEngine(restoringFrom: Array(bytes[0..<length]), configuration: .init())
            }
        }
    }

    @Test func flippedBytesNeverCrash() {
        let bytes = Self.richHarness().engine.encodedState()
        for offset in 0..<bytes.count {
            for mask: UInt8 in [0x01, 0x80, 0xff] {
                var damaged = bytes
                damaged[offset] ^= mask
                #expect(throws: SnapshotDecodingError.self) {
                    _ = try ReceiptEngine(restoringFrom: damaged, configuration: .init())
                }
            }
        }
    }

    /// The snapshot's checksum (a copy of the format's definition), so a test can damage the
    /// body and re-seal it, reaching the structural checks behind the checksum.
    static func sealed(_ body: [UInt8]) -> [UInt8] {
        var hash: UInt64 = 0x9e37_79b9_7f4a_7c15 ^ UInt64(body.count)
        var offset = 0
        while offset + 8 <= body.count {
            var word: UInt64 = 0
            for i in 0..<8 { word |= UInt64(body[offset + i]) << (8 * UInt64(i)) }
            hash = (hash ^ word) &* 0x0000_0100_0000_01b3
            hash ^= hash >> 31
            offset += 8
        }
        while offset < body.count {
            hash = (hash ^ UInt64(body[offset])) &* 0x0000_0100_0000_01b3
            offset += 1
        }
        hash ^= hash >> 29
        return body + (0..<8).map { UInt8(truncatingIfNeeded: hash >> (8 * UInt64($0))) }
    }

    @Test func resealedDamageNeverCrashesTheDecoderOrTheEngine() {
        let bytes = Self.richHarness().engine.encodedState()
        #expect(Self.sealed(Array(bytes.dropLast(8))) == bytes)
        let body = Array(bytes.dropLast(8))
        var decoded = 0
        var damages: [[UInt8]] = []
        for offset in 10..<body.count {
            for mask: UInt8 in [0x01, 0x04, 0x80, 0xff] {
                var damaged = body
                damaged[offset] ^= mask
                damages.append(damaged)
            }
            // Whole words set to extremes: huge counts, indexes and watermarks.
            for fill: UInt8 in [0x00, 0xff] where offset + 4 <= body.count {
                var damaged = body
                for i in offset..<offset + 4 { damaged[i] = fill }
                damages.append(damaged)
            }
        }
        for damaged in damages {
            guard var engine = try? ReceiptEngine(restoringFrom: Self.sealed(damaged), configuration: .init()) else {
                continue
            }
            // Whatever decoded must keep working: queries and further events, no traps.
            decoded += 1
            for conversation in ["g", "ab"] {
                for message in engine.snapshot(conversation: conversation, limit: 0)?.messages ?? [] {
                    _ = engine.readDetail(conversation: conversation, message: message.message)
                }
            }
            for user in ["A", "B", "C", "D", "E"] { _ = engine.unreadCounts(user: user, conversations: []) }
            let further: [EventKind] = [
                .messageSent(conversation: "g", message: "z", sender: "A", isSystem: false),
                .read(conversation: "g", user: "E", message: nil), .read(conversation: "g", user: "D", message: nil),
                .delivered(conversation: "g", user: "E", message: "later"), .memberLeft(conversation: "g", user: "E"),
                .memberLeft(conversation: "g", user: "D"), .userDeleted(user: "A"),
                .memberJoined(conversation: "g", user: "C"),
            ]
            for (i, kind) in further.enumerated() {
                _ = engine.apply(
                    Event(id: EventID(source: "fuzz", sequence: UInt64(i + 1)), kind: kind),
                    at: Timestamp(milliseconds: 1_800_000_000_000)
                )
            }
            _ = engine.expireMessages(sentBefore: Timestamp(milliseconds: 1_800_000_000_000))
            _ = engine.encodedState()
        }
        // Many single-byte changes land in times, flags or ids and decode fine; that is expected.
        #expect(decoded > 0)
    }

    /// Decodes a re-sealed body, returning the error code (nil if it decoded).
    static func code(resealed body: [UInt8]) -> SnapshotDecodingError.Code? {
        do {
            _ = try ReceiptEngine(restoringFrom: sealed(body), configuration: .init())
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aUserListingAConversationTwiceIsCorrupt() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        let body = Array(h.engine.encodedState().dropLast(8))
        #expect(Self.code(resealed: body) == nil)
        // Users start after magic, version and three totals (34 bytes) and the user count:
        // "A" is a 4-byte length, 1 byte, two flags, then its list: count 1, conversation 0.
        let list = 34 + 4 + 4 + 1 + 2
        #expect(Array(body[list..<list + 8]) == [1, 0, 0, 0, 0, 0, 0, 0])
        var twice = body
        twice[list] = 2
        twice.insert(contentsOf: [0, 0, 0, 0], at: list + 8)
        #expect(Self.code(resealed: twice) == .corrupt)
    }

    @Test func messageFlagsAreChecked() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m1", from: "A")
        let sentAt = h.status("g", "m1").sentAt.milliseconds
        let body = Array(h.engine.encodedState().dropLast(8))
        #expect(Self.code(resealed: body) == nil)
        // The message record: sentAt, two times, sender, counted, two counts, flags, status.
        let sentBytes = (0..<8).map { UInt8(truncatingIfNeeded: sentAt >> (8 * Int64($0))) }
        let record = (0...body.count - 8).first { Array(body[$0..<$0 + 8]) == sentBytes }!
        let flags = record + 24 + 16
        #expect(body[record + 28] == 1)  // counted: B
        #expect(body[flags] == 8)  // has recipients
        var unknownBit = body
        unknownBit[flags] |= 32
        #expect(Self.code(resealed: unknownBit) == .corrupt)
        var mentioningEveryone = body
        mentioningEveryone[flags] |= 16
        #expect(Self.code(resealed: mentioningEveryone) == nil)
        var system = body
        system[flags] |= 1
        #expect(Self.code(resealed: system) == nil)
        var systemMentioningEveryone = body
        systemMentioningEveryone[flags] |= 1 | 16
        #expect(Self.code(resealed: systemMentioningEveryone) == .corrupt, "a system message mentions nobody")
        var countedWithoutRecipients = body
        countedWithoutRecipients[flags] = 0
        #expect(Self.code(resealed: countedWithoutRecipients) == .corrupt)
    }

    @Test func garbageAndWrongVersionAreNamed() {
        func code(_ bytes: [UInt8]) -> SnapshotDecodingError.Code? {
            do {
                _ = try ReceiptEngine(restoringFrom: bytes, configuration: .init())
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code([]) == .badMagic)
        #expect(code(Array("not a snapshot at all".utf8)) == .badMagic)
        var wrongVersion = ReceiptEngine().encodedState()
        wrongVersion[8] = 99
        #expect(code(wrongVersion) == .unsupportedVersion)
        var badChecksum = ReceiptEngine().encodedState()
        badChecksum[badChecksum.count - 1] ^= 1
        #expect(code(badChecksum) == .corrupt)
    }
}
