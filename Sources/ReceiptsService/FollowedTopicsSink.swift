import ReceiptsWire
import Synchronization
import ZeroMQ

/// The worker's XPUB socket as the publishing thread's sink: it sends every status update, and
/// a read-state update only when some subscriber follows its user's topic
/// (``UserTopicSubscriptions``), since most users have no device online and an update nobody
/// follows would be encoded only for libzmq to drop it.
///
/// The subscriptions are read on the publishing thread (``refreshSubscriptions()``, at least
/// every 100 ms and before each batch); whether any user topic is followed at all is shared
/// with the pipeline's thread through an atomic, so that while none is, the pipeline does not
/// even hand read states over.
final class FollowedTopicsSink: UpdateSink, @unchecked Sendable {
    private let socket: ZMQSocket
    /// Touched only by the publishing thread.
    private var subscriptions = UserTopicSubscriptions()
    private let anyUserFollowed = Atomic<Bool>(false)

    /// - Parameter socket: The bound XPUB socket; from the publishing thread's start to its
    ///   stop, nothing else may use it.
    init(socket: ZMQSocket) {
        self.socket = socket
    }

    var followsUserTopics: Bool { anyUserFollowed.load(ordering: .relaxed) }

    func refreshSubscriptions() {
        var changed = false
        while let took = try? socket.receiveMultipart(
            dontWait: true,
            { frames in
                frames.count == 1 ? subscriptions.take(frames[0]) : false
            }
        ) {
            changed = changed || took
        }
        if changed { anyUserFollowed.store(subscriptions.count > 0, ordering: .relaxed) }
    }

    func publish(topic: [UInt8], update: PublishedUpdate) {
        if case .readState = update, !subscriptions.follows(topic) { return }
        socket.publish(topic: topic, update: update)
    }
}
