/// The routing part of a request received on a ROUTER socket, and the body after it.
///
/// A REQ peer's request arrives as `[identity, "", body]`; a DEALER peer may send
/// `[identity, body]` or `[identity, "", body]`. The reply goes back with the same envelope,
/// so both kinds of peer get the shape they expect.
package struct RequestEnvelope {
    /// The identity frame, plus the empty delimiter frame if the peer sent one.
    package let routingFrames: [[UInt8]]

    /// Splits a ROUTER message into its envelope (copied, to reply with later) and body frames.
    ///
    /// The envelope is every frame up to and including the first empty delimiter, so a REQ
    /// behind a ROUTER-DEALER broker (several identity frames) is answered too; without a
    /// delimiter (a DEALER that sends none) it is the identity frame alone.
    /// - Returns: nil if there is not even an identity frame.
    package static func split(
        _ frames: [UnsafeRawBufferPointer]
    ) -> (envelope: RequestEnvelope, body: ArraySlice<UnsafeRawBufferPointer>)? {
        guard !frames.isEmpty else { return nil }
        let envelopeEnd = (frames.firstIndex { $0.isEmpty }).map { $0 + 1 } ?? 1
        return (RequestEnvelope(routingFrames: frames[..<envelopeEnd].map { Array($0) }), frames[envelopeEnd...])
    }

    /// The routing id the ROUTER gave the peer's connection (the first frame).
    package var peer: [UInt8] { routingFrames[0] }

    /// The frames to send: the envelope followed by the reply body.
    package func reply(_ body: [UInt8]) -> [[UInt8]] {
        routingFrames + [body]
    }
}
