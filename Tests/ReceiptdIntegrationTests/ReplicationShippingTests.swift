import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Two receiptd processes with fixed roles (deploy/REPLICATION.md, steps 3 and 4): the primary
/// ships its log over the replication endpoint, and with `--replication-ack standby` every
/// event it acknowledged is on the standby when the primary is SIGKILLed.
@Suite(.startsProcesses) struct ReplicationShippingTests {
    /// The primary's events: a group, then messages each delivered and read.
    static func batches(_ factory: inout EventFactory, count: Int) -> [[Event]] {
        var batches = [
            [factory.make(.conversationUpserted(conversation: "c", kind: .group, members: ["ann", "bob", "cat"]))]
        ]
        for index in 0..<count {
            batches.append([
                factory.make(.messageSent(conversation: "c", message: "m\(index)", sender: "ann", isSystem: false)),
                factory.make(.delivered(conversation: "c", user: "bob", message: "m\(index)")),
                factory.make(.read(conversation: "c", user: "cat", message: "m\(index)")),
            ])
        }
        return batches
    }

    /// A primary and a standby of fixed roles (no etcd), the standby following the primary's
    /// replication endpoint (in the primary's data directory); frames wait up to 5 s for it.
    static func fixedRolePair() async throws -> (
        primary: ReceiptdProcess, standby: ReceiptdProcess, replication: String
    ) {
        let primary = try await ReceiptdProcess(
            arguments: [
                "--member", "alpha-0", "--replication-fixed-role", "primary", "--replication-timeout-ms", "5000",
            ]
        )
        let replication = "ipc://\(primary.dataDirectory)/replication.sock"
        let standby = try await ReceiptdProcess(
            arguments: ["--member", "beta-0", "--replication-fixed-role", "standby=\(replication)"]
        )
        return (primary, standby, replication)
    }

    @Test func everyEventThePrimaryAcknowledgedIsOnTheStandbyWhenItDies() async throws {
        let (primary, standby, _) = try await Self.fixedRolePair()
        var factory = EventFactory()
        let batches = Self.batches(&factory, count: 300)
        // Frames wait (they are not refused within the 5 s timeout) until the standby joined.
        let replies = try primary.ingestPipelined(batches)
        #expect(replies.allSatisfy { $0.error == nil }, "\(replies.compactMap(\.error).prefix(3))")
        #expect(replies.flatMap(\.results).allSatisfy { $0 == .accepted(held: false) })
        primary.kill9()
        #expect(try await standby.terminate() == 0)

        // The standby's directory, opened as a worker of its own, holds every acknowledged event.
        let survivor = try await ReceiptdProcess(dataDirectory: standby.dataDirectory)
        for index in [0, 150, 299] {
            let status = try await survivor.status("c", "m\(index)", viewer: Viewer(user: "ann"))
            #expect(status.status.readCount == 1, "m\(index): \(status)")
        }
        let again = try await survivor.ingest([batches[1][0]])
        #expect(again == [.duplicate])
    }

    @Test func underStallAPrimaryWithoutAStandbyRefusesIngestAndAppliesNothing() async throws {
        let primary = try await ReceiptdProcess(
            arguments: [
                "--member", "alpha-0", "--replication-fixed-role", "primary", "--replication-timeout-ms", "300",
            ]
        )
        try await Task.sleep(for: .milliseconds(600))
        var factory = EventFactory()
        let reply = try primary.ingestPipelined(Self.batches(&factory, count: 1))
        #expect(reply.allSatisfy { $0.error?.code == .unavailable })
        #expect(try await primary.counter("receiptd.replication.refused_frames") == 2)
        await #expect(throws: ReceiptsClientError.self) {
            try await primary.status("c", "m0", viewer: Viewer(user: "ann"))
        }
    }

    /// What a buggy or hostile peer sends to the replication endpoint, as raw frames: bytes that
    /// are no protobuf, a body with a stray second frame, an empty message, a `Follow` of another
    /// ordinal. Each is refused and counted; the standby's session goes on, and acknowledgements
    /// (which wait for it) with it.
    @Test func oddBytesOnTheReplicationEndpointAreCountedAndShippingGoesOn() async throws {
        let (primary, standby, replicationEndpoint) = try await Self.fixedRolePair()
        var factory = EventFactory()
        #expect(try primary.ingestPipelined(Self.batches(&factory, count: 10)).allSatisfy { $0.error == nil })

        let stranger = try ZMQSocket(context: ReceiptdProcess.sharedContext, type: .dealer)
        defer { stranger.close() }
        try stranger.connect(replicationEndpoint)
        let otherOrdinal = ReplicationRequest.follow(
            ReplicationRequest.Follow(
                session: 9,
                member: "mallory-1",
                workerIndex: 1,
                knownTerm: 0,
                terms: [TermStart(term: 0, start: 0, member: "")],
                logEnd: 0,
                durable: 0,
                engineSettings: "",
                windowBytes: 1 << 20
            )
        )
        let garbage: [[[UInt8]]] = [[[0xFF, 0x00, 0x13, 0x37]], otherOrdinal.encode() + [[1, 2, 3]], [[]]]
        for frames in garbage { _ = try stranger.send(frames) }
        _ = try stranger.send(otherOrdinal.encode())
        try stranger.setReceiveTimeout(milliseconds: 5000)
        let refusal = try #require(try stranger.receiveMultipart(), "the Follow of another ordinal got no answer")
        guard case .refused(let session, let error) = try ReplicationMessage.decode(refusal) else {
            throw IntegrationError("not a refusal: \(refusal)")
        }
        #expect(session == 9 && error.code == .invalidArgument)
        let invalid = try await primary.client.stats(worker: 0).filter { $0.name == "receiptd.frames.invalid" }
        #expect(invalid.reduce(0) { $0 + $1.value } >= 3, "\(invalid)")
        // The standby's session went on: acknowledgements, which wait for it, still come.
        #expect(try primary.ingestPipelined(Self.batches(&factory, count: 10)).allSatisfy { $0.error == nil })
        #expect(standby.isRunning && primary.isRunning)
    }
}
