import Foundation
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// A message over the transport bound (twice `--max-frame-bytes` plus 4 KiB) is not read:
/// libzmq closes its connection with no reply. That disconnection is counted per endpoint and
/// logged, so an operator sees why a gateway lost its connection; the worker serves on.
@Suite(.serialized, .startsProcesses)
struct TransportBoundTests {
    /// The application limit; the transport bound is 2 MiB + 4 KiB.
    private static let maxFrameBytes = 1 << 20

    /// Sends one message of `bytes` bytes on a new raw DEALER to `daemon`'s `endpoint` and
    /// waits until receiptd has counted the connection it closed; only then closes the DEALER:
    /// closed at once, with a linger, a loaded machine could discard the message before it was
    /// written (as on a fresh CI machine, where the counter stayed 0).
    private static func sendOversized(
        _ bytes: Int,
        to endpoint: String,
        label: String,
        in daemon: ReceiptdProcess
    ) async throws {
        let dealer = try ZMQSocket(context: daemon.context, type: .dealer)
        defer { dealer.close() }
        try dealer.setLinger(milliseconds: 0)
        try dealer.connect(endpoint)
        _ = try dealer.send([[], [UInt8](repeating: 0x0a, count: bytes)])
        try await daemon.waitForCounter(
            "receiptd.connections.closed",
            label: label,
            toReach: 1,
            timeoutMilliseconds: 30_000
        )
    }

    @Test("A frame over the transport bound closes its connection, counted and logged per endpoint")
    func overTheBoundIsCountedAndLogged() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--max-frame-bytes", "\(Self.maxFrameBytes)"])
        let transportBound = 2 * Self.maxFrameBytes + 4096

        // Under the bound but over the limit: read, and answered FRAME_TOO_LARGE.
        let refused = try IngestReply.decode(
            try daemon.ingestRaw([[UInt8](repeating: 0x0a, count: transportBound - 64)])
        )
        #expect(refused.error?.code == .frameTooLarge)

        try await Self.sendOversized(3 << 20, to: daemon.ingestEndpoint, label: "ingest", in: daemon)
        try await Self.sendOversized(transportBound + 65_536, to: daemon.queryEndpoint, label: "query", in: daemon)

        let log = daemon.standardError()
        for endpoint in ["ingest", "query"] {
            #expect(
                log.contains(#""endpoint":"\#(endpoint)""#) && log.contains("over the transport bound"),
                "no log line for the closed \(endpoint) connection"
            )
        }
        #expect(log.contains(#""transport.max_message_bytes":"\#(transportBound)""#))

        // The worker serves on.
        var events = EventFactory()
        let outcomes = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: "after-bound", kind: .group, members: ["a", "b"]))
        ])
        #expect(outcomes == [.accepted(held: false)])
    }
}
