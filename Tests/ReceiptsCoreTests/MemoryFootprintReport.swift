import Glibc
import ReceiptsCore
import Testing

/// Not a test but a measurement (SPEC §8 memory and snapshot-load targets), run on demand:
///
///     RECEIPTS_MEMORY_REPORT=1 swift test -c release --filter memoryFootprintReport
///
/// Builds 1,000,000 messages in 10,000 conversations of 2-50 members (users drawn from a
/// pool of 100,000, message ids 36 characters like UUIDs), then receipts, and prints heap
/// resident bytes per message, per (conversation, member) and per receipt advance, plus snapshot
/// encode/restore rates. It asserts nothing: speed and size are for benchmarks, not tests.
struct MemoryFootprintReport {
    static var enabled: Bool { getenv("RECEIPTS_MEMORY_REPORT").map { String(cString: $0) } == "1" }

    /// Resident bytes after returning free heap pages to the system (glibc `malloc_trim`,
    /// looked up at run time because Swift's Glibc module does not import malloc.h).
    static func heapBytes() -> Int {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
        }
        return residentBytes()
    }

    /// Resident set size from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var size = 0
        var resident = 0
        guard
            withUnsafeMutablePointer(
                to: &size,
                { s in
                    withUnsafeMutablePointer(to: &resident) { r in withVaList([s, r]) { vfscanf(file, "%ld %ld", $0) } }
                }
            ) == 2
        else { return 0 }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// A 36-character id, like a UUID string.
    static func uuidLike(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        let padded = String(repeating: "0", count: max(0, 32 - hex.count)) + hex
        let chars = Array(padded)
        return String(chars[0..<8]) + "-" + String(chars[8..<12]) + "-" + String(chars[12..<16]) + "-"
            + String(chars[16..<20]) + "-" + String(chars[20..<32])
    }

    @Test(.enabled(if: MemoryFootprintReport.enabled)) func memoryFootprintReport() throws {
        let conversationCount = 10_000
        let messagesPerConversation = 100
        var random: UInt64 = 0x1234_5678
        func next(_ bound: Int) -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((random >> 33) % UInt64(bound))
        }
        var sequence: UInt64 = 0
        var now: Int64 = 1_700_000_000_000
        func event(_ kind: EventKind) -> Event {
            sequence += 1
            return Event(id: EventID(source: "gw", sequence: sequence), kind: kind)
        }

        // Events are generated up front so that only the engine's memory is measured.
        var memberships: [[String]] = []
        var upserts: [Event] = []
        for c in 0..<conversationCount {
            var members = Set<String>()
            let size = 2 + next(49)
            while members.count < size { members.insert("user-\(next(100_000))") }
            let list = members.sorted()
            memberships.append(list)
            upserts.append(
                event(
                    .conversationUpserted(
                        conversation: "conversation-\(c)",
                        kind: size == 2 ? .direct : .group,
                        members: list
                    )
                )
            )
        }
        var sends: [Event] = []
        sends.reserveCapacity(conversationCount * messagesPerConversation)
        for i in 0..<conversationCount * messagesPerConversation {
            let c = i % conversationCount
            let members = memberships[c]
            sends.append(
                event(
                    .messageSent(
                        conversation: "conversation-\(c)",
                        message: Self.uuidLike(i),
                        sender: members[next(members.count)],
                        isSystem: false
                    )
                )
            )
        }
        var receipts: [Event] = []
        for c in 0..<conversationCount {
            let last = Self.uuidLike((messagesPerConversation - 1) * conversationCount + c)
            let middle = Self.uuidLike((messagesPerConversation / 2) * conversationCount + c)
            for (k, user) in memberships[c].enumerated() {
                receipts.append(event(.delivered(conversation: "conversation-\(c)", user: user, message: last)))
                if k % 2 == 0 {
                    receipts.append(event(.read(conversation: "conversation-\(c)", user: user, message: middle)))
                }
            }
        }
        let memberCount = memberships.reduce(0) { $0 + $1.count }

        var engine = ReceiptEngine()
        let heap0 = Self.heapBytes()
        for e in upserts { _ = engine.apply(e, at: Timestamp(milliseconds: now)) }
        let heap1 = Self.heapBytes()
        let start = Self.seconds()
        for e in sends {
            now += 1
            _ = engine.apply(e, at: Timestamp(milliseconds: now))
        }
        let sendSeconds = Self.seconds() - start
        let heap2 = Self.heapBytes()
        let receiptStart = Self.seconds()
        for e in receipts { _ = engine.apply(e, at: Timestamp(milliseconds: now)) }
        let receiptSeconds = Self.seconds() - receiptStart
        let heap3 = Self.heapBytes()
        var advances = 0
        var covered = 0
        for c in 0..<conversationCount {
            let snapshot = engine.snapshot(conversation: "conversation-\(c)", limit: 0)!
            covered += snapshot.messages.reduce(0) { $0 + $1.deliveredCount }
            advances += memberships[c].count + (memberships[c].count + 1) / 2
        }

        let encodeStart = Self.seconds()
        let bytes = engine.encodedState()
        let encodeSeconds = Self.seconds() - encodeStart
        let heap4 = Self.heapBytes()
        let restoreStart = Self.seconds()
        let restored = try ReceiptEngine(restoringFrom: bytes, configuration: .init())
        let restoreSeconds = Self.seconds() - restoreStart
        let heap5 = Self.heapBytes()
        #expect(restored.counters == engine.counters)
        // A restored engine has exact-size arrays (no slack from growth by doubling), as the
        // live one has after retention at compaction.
        let budget = 100 * sends.count + 64 * memberCount

        let perMember = Double(heap1 - heap0) / Double(memberCount)
        let perMessage = Double(heap2 - heap1) / Double(sends.count)
        let perAdvance = Double(heap3 - heap2) / Double(advances)
        print(
            """
            memoryFootprintReport: \(conversationCount) conversations, \(memberCount) (conversation, member) pairs, \
            \(engine.counters.users) users, \(sends.count) messages (36-byte ids), \(advances) receipt advances
              resident per (conversation, member): \(String(format2: perMember)) bytes (incl. users and conversations; target <= 64)
              resident per message:                \(String(format2: perMessage)) bytes (incl. the 36-byte id; target <= 100)
              resident per receipt advance:        \(String(format2: perAdvance)) bytes
              resident growth in all \(heap3 - heap0) bytes; SPEC §8 budget for this load \(budget) bytes plus advances
              restored from the snapshot: \(heap5 - heap4) bytes resident \
            (\(String(format2: Double(heap5 - heap4) / Double(budget + 20 * advances) * 100))% of the budget plus 20 bytes per advance)
              apply: sends \(Int(Double(sends.count) / sendSeconds)) events/s, receipts \(Int(Double(receipts.count) / receiptSeconds)) events/s
              snapshot: \(bytes.count) bytes, encode \(String(format2: encodeSeconds)) s, restore \(String(format2: restoreSeconds)) s \
            = \(Int(Double(covered) / restoreSeconds)) delivered receipts/s (\(covered) (message, recipient) receipts)
            """
        )
    }
}

extension String {
    /// A number with two decimals.
    init(format2 value: Double) {
        let scaled = Int((value * 100).rounded())
        let fraction = abs(scaled % 100)
        self = "\(scaled / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
