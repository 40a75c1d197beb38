import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// A SUB socket following one conversation's status updates.
///
/// It is made by `ReceiptdProcess.subscribe(to:)`, which returns it only once the publisher
/// has attached it (see `waitForProbe`): libzmq's PUB takes a new subscriber in only at a
/// later send (the slow joiner), so a fixed sleep is a guess that load can defeat.
final class Subscriber {
    let socket: ZMQSocket
    let topic: [UInt8]
    private let probeTopic: [UInt8]
    /// Updates of the followed conversation that arrived during the handshake.
    private var early: [StatusUpdate] = []

    /// Subscribes to the followed conversation's topic first, then to the probe conversation's,
    /// and connects.
    ///
    /// Both subscriptions travel to the publisher in this order over the one connection, so
    /// an update of the probe conversation proves that the followed topic is subscribed too.
    init(context: ZMQContext, endpoint: String, conversation: String, probe: String) throws {
        // A raw socket: it tests the wire contract itself (exact sequences, gaps, the Clone pattern).
        socket = try ZMQSocket(context: context, type: .sub)
        topic = Array(Partitioning.exactTopic(for: conversation).utf8)
        probeTopic = Array(Partitioning.exactTopic(for: probe).utf8)
        try socket.subscribe(topic)
        try socket.subscribe(probeTopic)
        try socket.connect(endpoint)
    }

    deinit {
        socket.close()
    }

    /// Waits up to `timeoutMilliseconds` for an update of the probe conversation.
    /// - Returns: true once one arrived; the probe topic is then unsubscribed.
    func waitForProbe(timeoutMilliseconds: Int32) throws -> Bool {
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        while let frames = try socket.receiveMultipart() {
            guard frames.count == 2 else { throw IntegrationError("update has \(frames.count) frames") }
            if frames[0] == topic {
                early.append(try StatusUpdate.decode(frames[1]))
            } else if frames[0] == probeTopic {
                // Probe updates still in flight are skipped by `next`.
                try socket.unsubscribe(probeTopic)
                return true
            }
        }
        return false
    }

    /// The next update of this conversation, or nil after `timeoutMilliseconds` of silence.
    func next(timeoutMilliseconds: Int32 = 5000) throws -> StatusUpdate? {
        if !early.isEmpty { return early.removeFirst() }
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        while let frames = try socket.receiveMultipart() {
            guard frames.count == 2 else { throw IntegrationError("update has \(frames.count) frames") }
            if frames[0] == topic { return try StatusUpdate.decode(frames[1]) }
        }
        return nil
    }

    /// Reads updates until one satisfies `predicate`; returns every update read.
    func updates(until predicate: (StatusUpdate) -> Bool) throws -> [StatusUpdate] {
        var seen: [StatusUpdate] = []
        while let update = try next() {
            seen.append(update)
            if predicate(update) { return seen }
        }
        throw IntegrationError("no matching update within 5 s; saw \(seen.map { ($0.sequence, $0.status.status) })")
    }
}
