import ReceiptsCore
import ReceiptsWire

/// The committed seed corpus (`Tests/ReceiptsFuzzingTests/Corpus/<target>/seed-*`): valid
/// inputs of each target for libFuzzer to start from. `receipts-fuzz seeds DIR` writes them;
/// a test fails when the committed files are stale.
public enum SeedCorpus {
    /// The seeds of `target`, named.
    public static func seeds(for target: FuzzTarget) -> [(name: String, bytes: [UInt8])] {
        switch target {
        case .eventBatch: eventBatches.map { ($0.0, EventBatchCodec.encode($0.1)) }
        case .query: queries.map { ($0.0, $0.1.encode()) }
        case .snapshot: snapshots
        case .segment: segments
        case .engine: scripts
        case .replicationRequest: replicationRequests.map { ($0.0, $0.1.encode()[0]) }
        case .replicationMessage: replicationMessages.map { ($0.0, ReplicationTargets.input(frames: $0.1.encode())) }
        }
    }

    /// The term history of the replication seeds: term 2 after term 1.
    static let replicationTerms = [
        TermStart(term: 1, start: 0, member: "receiptd-3"),
        TermStart(term: 2, start: 4096, member: "receiptd-b-3"),
    ]

    static let replicationRequests: [(String, ReplicationRequest)] = [
        (
            "seed-follow",
            .follow(
                ReplicationRequest.Follow(
                    session: 0x5EED,
                    member: "receiptd-3",
                    workerIndex: 3,
                    knownTerm: 2,
                    terms: replicationTerms,
                    logEnd: 8192,
                    durable: 8000,
                    engineSettings: "retention-days=30\n",
                    windowBytes: 16 << 20
                )
            )
        ),
        ("seed-ack", .ack(ReplicationRequest.Ack(session: 0x5EED, appended: 9000, durable: 8500, applied: 8192))),
    ]

    static let replicationMessages: [(String, ReplicationMessage)] = [
        (
            "seed-accepted",
            .accepted(
                ReplicationMessage.FollowAccepted(session: 0x5EED, term: 2, continueAt: 8000, snapshotFirst: false)
            )
        ),
        (
            "seed-records",
            .records(
                ReplicationMessage.Records(
                    session: 0x5EED,
                    term: 2,
                    start: 8000,
                    bytes: [3, 0, 0, 0, 1, 0xA, 0xB, 0xC, 0, 0, 0, 0],
                    acknowledged: 7900,
                    primaryEnd: 9000
                )
            )
        ),
        (
            "seed-snapshot-chunk",
            .snapshot(
                ReplicationMessage.SnapshotChunk(
                    session: 0x5EED,
                    position: 4096,
                    fileBytes: 16,
                    offset: 0,
                    bytes: Array("RCPTSNAP".utf8) + [0, 16, 0, 0, 0, 0, 0, 0],
                    terms: replicationTerms,
                    engineSettings: "retention-days=30\n"
                )
            )
        ),
        (
            "seed-heartbeat",
            .heartbeat(
                ReplicationMessage.Heartbeat(
                    session: 0x5EED,
                    term: 2,
                    acknowledged: 8500,
                    primaryEnd: 9000,
                    primaryDurable: 8800
                )
            )
        ),
        (
            "seed-refused",
            .refused(
                session: 0x5EED,
                error: ErrorReply(
                    code: .notPrimary,
                    message: "receiptd-3 is a standby",
                    primary: ErrorReply.Primary(
                        member: "receiptd-b-3",
                        ingest: "tcp://receiptd-b-3.receiptd:7001",
                        query: "tcp://receiptd-b-3.receiptd:7002",
                        publish: "tcp://receiptd-b-3.receiptd:7003"
                    ),
                    term: 2
                )
            )
        ),
    ]

    static func event(_ sequence: UInt64, _ kind: EventKind, clientTime: Int64? = nil) -> Event {
        Event(
            id: EventID(source: "seed", sequence: sequence),
            clientTime: clientTime.map { Timestamp(milliseconds: $0) },
            kind: kind
        )
    }

    static let eventBatches: [(String, [Event])] = [
        ("seed-empty", []),
        (
            "seed-group-chat",
            [
                event(1, .conversationUpserted(conversation: "g1", kind: .group, members: ["alice", "bob", "carol"])),
                event(2, .messageSent(conversation: "g1", message: "m1", sender: "alice", isSystem: false)),
                event(3, .delivered(conversation: "g1", user: "bob", message: "m1")),
                event(4, .read(conversation: "g1", user: "carol", message: "m1"), clientTime: 1_700_000_000_000),
                event(5, .read(conversation: "g1", user: "bob", message: nil)),
                event(6, .messageEdited(conversation: "g1", message: "m1")),
                event(7, .memberLeft(conversation: "g1", user: "carol")),
                event(
                    8,
                    .messageSent(
                        conversation: "g1",
                        message: "m2",
                        sender: "bob",
                        isSystem: false,
                        mentions: Mentions(users: ["alice", "carol"], everyone: true)
                    )
                ),
            ]
        ),
        (
            "seed-direct-chat",
            [
                event(1, .conversationUpserted(conversation: "d1", kind: .direct, members: ["alice", "bob"])),
                event(2, .messageSent(conversation: "d1", message: "hello", sender: "bob", isSystem: false)),
                event(3, .receiptPrivacy(user: "alice", shareReads: false)),
                event(4, .read(conversation: "d1", user: "alice", message: "hello")),
                event(5, .markedUnread(conversation: "d1", user: "alice")),
                event(6, .messageDeleted(conversation: "d1", message: "hello")),
                event(7, .memberJoined(conversation: "d1", user: "carol")),
                event(8, .userDeleted(user: "bob")),
                event(9, .unknown),
            ]
        ),
    ]

    static let queries: [(String, Query)] = [
        (
            "seed-message-status",
            .messageStatus(
                conversation: "g1",
                message: "m1",
                viewer: Viewer(user: "alice", timeZone: "Europe/Paris", locale: "fr_FR", prefersCounts: true)
            )
        ),
        ("seed-read-detail", .readDetail(conversation: "g1", message: "m1")),
        (
            "seed-last-sent",
            .lastSent(conversation: "d1", viewer: Viewer(user: "bob", timeZone: "", locale: "", prefersCounts: false))
        ),
        ("seed-unread-counts", .unreadCounts(user: "alice", conversations: ["g1", "d1"])),
        ("seed-snapshot", .snapshot(conversation: "g1", limit: 50)),
        ("seed-health", .health),
        ("seed-stats", .stats),
        ("seed-compact", .compact),
    ]

    /// The state after each engine seed script, framed both ways the snapshot target reads.
    static var snapshots: [(String, [UInt8])] {
        scripts.flatMap { name, script in
            let state = EngineTarget.state(after: script).encodedState()
            let body = state.dropFirst(10).dropLast(8)
            return [("\(name)-sealed", [0] + body), ("\(name)-raw", [1] + state)]
        }
    }

    static var segments: [(String, [UInt8])] {
        let records: [UInt8] = [3, 1, 0xA, 0xB, 0xC, 0, 2, 5, 1, 1, 2, 3, 4, 5]
        return [
            ("seed-records", [2] + records),
            ("seed-term-record", [2] + records + [UInt8(termRecordPayload.count), 9] + termRecordPayload),
            ("seed-flipped-record", [3] + records + [0, 0, 0, 30]),
            ("seed-torn-tail", [3] + records + [1, 0, 0, 40]),
            ("seed-zero-filled", [3] + records + [2, 0, 0, 35]),
            ("seed-header-then-bytes", [1] + records),
        ]
    }

    /// The payload of a `termStarted` record (type 9, deploy/REPLICATION.md section 7.1): term
    /// u64 | previous term u64 | member name (u16 length, UTF-8); here term 2 after term 1, for
    /// member "receiptd-b-3". `LogRecordTests` reads it back from the committed seed.
    static let termRecordPayload: [UInt8] =
        [2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 12, 0] + Array("receiptd-b-3".utf8)

    /// Engine scripts, two bytes a step (see `EngineScript.step`).
    static let scripts: [(String, [UInt8])] = [
        // A sends m0 and m1 in the group; B delivers m1, C reads m0, E joins, E and D read everything.
        ("seed-group", [0x00, 0x00, 0x20, 0x01, 0x03, 0x09, 0x25, 0x10, 0x07, 0x20, 0x06, 0x20, 0x46, 0x18]),
        // The direct chat: B sends, A reads with a client time, B edits, retention, a resend.
        ("seed-direct", [0x10, 0x08, 0x95, 0x00, 0x19, 0x08, 0x6B, 0x20, 0x1D, 0x00]),
        // Held receipts: D reads m5 before it exists, then C sends it; D leaves; g's members are replaced.
        ("seed-held", [0x05, 0x1D, 0x00, 0x15, 0x08, 0x18, 0x0C, 0x10]),
    ]
}
