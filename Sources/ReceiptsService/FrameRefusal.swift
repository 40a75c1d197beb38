import ReceiptsWire

/// Why a whole frame (an ingest batch or a query) was refused: the error reply's code and
/// message, and the gateway limit it hit, if it hit one.
struct FrameRefusal: Error {
    var code: ErrorReply.Code
    var message: String
    var limit: GatewayLimits.Limit? = nil

    /// The error reply that tells the peer.
    var errorReply: ErrorReply { ErrorReply(code: code, message: message) }
}
