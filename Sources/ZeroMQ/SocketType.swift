import CZeroMQ

/// The ZeroMQ socket patterns this module supports.
public enum SocketType: Sendable, Hashable, CaseIterable {
    /// Publishes to all subscribers; drops at the high-water mark.
    case pub
    /// A PUB that also receives its subscribers' subscriptions: a first byte 1 (subscribe) or 0
    /// (unsubscribe), then the prefix; each prefix once while any subscriber has it.
    case xpub
    /// Receives what publishers send for its subscribed prefixes.
    case sub
    /// A SUB whose subscriptions are messages it sends (first byte 1 or 0, then the prefix):
    /// what a peer in any language can put on the wire to an XPUB, odd messages included.
    case xsub
    /// Strict send-then-receive client.
    case req
    /// Strict receive-then-send server.
    case rep
    /// Asynchronous client: round-robin out, fair-queued in.
    case dealer
    /// Asynchronous server: prefixes each message with the sender's routing id.
    case router
    /// Pipeline upstream.
    case push
    /// Pipeline downstream.
    case pull
    /// Exclusive one-to-one pair.
    case pair

    /// The libzmq `ZMQ_*` constant.
    var rawValue: Int32 {
        switch self {
        case .pub: ZMQ_PUB
        case .xpub: ZMQ_XPUB
        case .sub: ZMQ_SUB
        case .xsub: ZMQ_XSUB
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        }
    }
}
