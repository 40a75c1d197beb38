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
///
/// A subscriber that follows one user's topic (every one: the socket is `XPUB_VERBOSE`) is
/// handed to the pipeline's thread as a new follower (``takeNewFollowers()``), which announces
/// the user's state on the topic: libzmq has attached the subscriber before its subscription can
/// be read here, so the announcement reaches it, and its number tells a device whose snapshot
/// raced the subscription that it missed a change.
final class FollowedTopicsSink: UpdateSink, @unchecked Sendable {
    private let socket: ZMQSocket
    /// Touched only by the publishing thread.
    private var subscriptions = UserTopicSubscriptions()
    private let anyUserFollowed = Atomic<Bool>(false)
    private let newFollowers = Mutex<[String]>([])
    /// Whether `newFollowers` may hold any: the pipeline asks at every turn of its loop, and a
    /// load is all that costs while none came.
    private let hasNewFollowers = Atomic<Bool>(false)
    private let wake: @Sendable () -> Void

    /// - Parameters:
    ///   - socket: The bound XPUB socket; from the publishing thread's start to its stop,
    ///     nothing else may use it.
    ///   - wake: Rings the pipeline's thread when a user's topic gained a subscriber.
    init(socket: ZMQSocket, wake: @escaping @Sendable () -> Void) {
        self.socket = socket
        self.wake = wake
    }

    var followsUserTopics: Bool { anyUserFollowed.load(ordering: .relaxed) }

    func refreshSubscriptions() {
        var changed = false
        var followed: [String] = []
        while let took = try? socket.receiveMultipart(
            dontWait: true,
            { frames in
                guard frames.count == 1 else { return false }
                if let user = UserTopicSubscriptions.user(subscribedBy: frames[0]) { followed.append(user) }
                return subscriptions.take(frames[0])
            }
        ) {
            changed = changed || took
        }
        if changed { anyUserFollowed.store(subscriptions.count > 0, ordering: .relaxed) }
        guard !followed.isEmpty else { return }
        newFollowers.withLock { $0 += followed }
        hasNewFollowers.store(true, ordering: .releasing)
        wake()
    }

    func takeNewFollowers() -> [String] {
        guard hasNewFollowers.load(ordering: .acquiring) else { return [] }
        // Cleared before taking: a follower added after the take sets it again.
        hasNewFollowers.store(false, ordering: .relaxed)
        return newFollowers.withLock { taken in
            defer { taken = [] }
            return taken
        }
    }

    func publish(topic: [UInt8], update: PublishedUpdate) {
        if case .readState = update, !subscriptions.follows(topic) { return }
        socket.publish(topic: topic, update: update)
    }
}
