/// The routing part of a request received on a ROUTER socket, and the body after it.
///
/// A REQ peer's request arrives as `[identity, "", body]`; a DEALER peer may send
/// `[identity, body]` or `[identity, "", body]`. The reply goes back with the same envelope,
/// so both kinds of peer get the shape they expect.
struct RequestEnvelope {
    /// The identity frame, plus the empty delimiter frame if the peer sent one.
    let routingFrames: [[UInt8]]

    /// Splits a ROUTER message into its envelope and body frames.
    /// - Returns: nil if there is not even an identity frame.
    static func split(_ frames: [[UInt8]]) -> (envelope: RequestEnvelope, body: ArraySlice<[UInt8]>)? {
        guard let identity = frames.first else { return nil }
        if frames.count >= 2, frames[1].isEmpty {
            return (RequestEnvelope(routingFrames: [identity, []]), frames[2...])
        }
        return (RequestEnvelope(routingFrames: [identity]), frames[1...])
    }

    /// The frames to send: the envelope followed by the reply body.
    func reply(_ body: [UInt8]) -> [[UInt8]] {
        routingFrames + [body]
    }
}
