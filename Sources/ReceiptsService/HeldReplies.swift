/// Replies that a ROUTER could not take yet, per peer, in the order they were made.
///
/// libzmq's ROUTER answers EAGAIN when its queue to one peer is full (the peer reads its
/// replies slower than it sends frames, or its host is busy), and a reply dropped there would
/// leave a frame that was applied and made durable without its acknowledgement. So the reply
/// waits here, and every later reply to the same peer waits behind it, until the ROUTER takes
/// them. Each peer holds at most `limit` replies: past that the peer is not reading at all,
/// and its next requests are discarded unread (`admits`) rather than applied without an answer.
struct HeldReplies {
    /// A connection on one of the ROUTER endpoints.
    struct Peer: Hashable {
        var endpoint: ReplyEndpoint
        var routingID: [UInt8]
    }

    /// Replies one peer may have held before its requests are discarded.
    let limit: Int
    private var queues: [Peer: FIFOQueue<[[UInt8]]>] = [:]
    /// Held replies over every peer.
    private(set) var count = 0

    init(limit: Int) {
        self.limit = limit
    }

    var isEmpty: Bool { count == 0 }

    /// Replies held for `peer`.
    func count(for peer: Peer) -> Int {
        queues[peer]?.count ?? 0
    }

    /// Holds a reply behind the peer's earlier ones.
    mutating func hold(_ frames: [[UInt8]], for peer: Peer) {
        queues[peer, default: FIFOQueue()].append(frames)
        count += 1
    }

    /// Offers each peer's held replies to `send`, oldest first, until it answers that one
    /// must wait longer; a peer whose queue empties is forgotten, and so is one that went away.
    /// - Returns: the replies forgotten because their peer went away.
    mutating func retry(_ send: (Peer, [[UInt8]]) -> ReplyDelivery) -> Int {
        var gone = 0
        for peer in Array(queues.keys) {
            retrying: while let frames = queues[peer]?.first {
                switch send(peer, frames) {
                case .sent:
                    _ = queues[peer]?.popFirst()
                    count -= 1
                case .wouldBlock:
                    break retrying
                case .unroutable:
                    let dropped = queues.removeValue(forKey: peer)?.count ?? 0
                    count -= dropped
                    gone += dropped
                }
            }
            if queues[peer]?.isEmpty == true {
                queues[peer] = nil
            }
        }
        return gone
    }

    /// Forgets everything.
    /// - Returns: how many replies were forgotten.
    mutating func dropAll() -> Int {
        defer {
            queues.removeAll()
            count = 0
        }
        return count
    }
}
