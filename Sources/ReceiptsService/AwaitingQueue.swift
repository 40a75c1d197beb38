/// The batches and replies waiting for the log to make them durable, oldest first, with the
/// number of replies each acknowledged-ingest connection has among them: the frames that
/// connection has in flight (`GatewayLimits.maxFramesInFlight`).
///
/// The counts change only where the queue does, so they are exact by construction: a frame
/// counts from when its reply (acknowledgement or refusal) is queued until the reply is taken
/// out to be sent. Frames answered at once never count. One dictionary update per frame, and
/// a connection with nothing waiting has no entry.
struct AwaitingQueue {
    private var items = FIFOQueue<ReceiptPipeline.AwaitingDurability>()
    /// Routing id of an ingest peer -> its replies in `items`.
    private var framesInFlight: [[UInt8]: Int] = [:]

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var first: ReceiptPipeline.AwaitingDurability? { items.first }

    /// The replies `peer` (a ROUTER routing id) has waiting.
    func framesInFlight(of peer: [UInt8]) -> Int {
        framesInFlight[peer] ?? 0
    }

    mutating func append(_ item: ReceiptPipeline.AwaitingDurability) {
        if let peer = item.reply?.ingestPeer {
            framesInFlight[peer, default: 0] += 1
        }
        items.append(item)
    }

    mutating func popFirst() -> ReceiptPipeline.AwaitingDurability? {
        guard let item = items.popFirst() else { return nil }
        if let peer = item.reply?.ingestPeer, let index = framesInFlight.index(forKey: peer) {
            if framesInFlight.values[index] == 1 {
                framesInFlight.remove(at: index)
            } else {
                framesInFlight.values[index] -= 1
            }
        }
        return item
    }
}

extension ReceiptPipeline.PendingReply {
    /// For a reply on the ingest ROUTER, the routing id of the connection it goes to.
    var ingestPeer: [UInt8]? {
        endpoint == .ingest ? frames.first : nil
    }
}
