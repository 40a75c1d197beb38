import ReceiptsCore

/// Which users' read-state topics some subscriber follows, from the subscription messages of the
/// worker's XPUB socket: a read-state update nobody follows is neither encoded nor sent.
///
/// A user topic is one per user, and most users have no device online, so most of them have no
/// subscriber (a gateway follows the users connected to it, exactly or by partition). libzmq's
/// XPUB reports a prefix when its first subscriber subscribes (first byte 1) and again when its
/// last one unsubscribes or goes away (first byte 0), so the set holds each prefix that has at
/// least one subscriber. Only prefixes that can match a user topic are kept: the empty one and
/// those starting with `Partitioning.userTopicPrefix`'s first byte.
struct UserTopicSubscriptions {
    /// The prefixes followed, by length (lookups cut the topic at each length in use).
    private var byLength: [Int: Set<ArraySlice<UInt8>>] = [:]
    /// How many prefixes are followed.
    private(set) var count = 0

    /// Takes one subscription message of the XPUB socket.
    /// - Returns: Whether the set changed.
    @discardableResult
    mutating func take(_ message: UnsafeRawBufferPointer) -> Bool {
        guard let kind = message.first, kind <= 1 else { return false }
        let prefix = ArraySlice(message.dropFirst())
        guard prefix.isEmpty || prefix.first == Self.userTopicFirstByte else { return false }
        if kind == 1 {
            guard byLength[prefix.count, default: []].insert(prefix).inserted else { return false }
            count += 1
        } else {
            guard byLength[prefix.count]?.remove(prefix) != nil else { return false }
            if byLength[prefix.count]?.isEmpty == true { byLength[prefix.count] = nil }
            count -= 1
        }
        return true
    }

    /// Whether some subscriber follows a topic.
    func follows(_ topic: [UInt8]) -> Bool {
        for (length, prefixes) in byLength where length <= topic.count {
            if prefixes.contains(topic[0..<length]) { return true }
        }
        return false
    }

    /// The user a subscription message subscribes to exactly: a whole topic frame
    /// (`Partitioning.exactUserTopic(for:)`), or a user's topic without the NUL whose digits are
    /// that user's (a gateway of an earlier release following one user). nil for anything else:
    /// an unsubscription, a partition, every user, a conversation.
    static func user(subscribedBy message: UnsafeRawBufferPointer) -> String? {
        guard message.first == 1 else { return nil }
        var topic = message.dropFirst()
        if topic.last == Partitioning.topicEnd { topic = topic.dropLast() }
        // "u:", 4 hex digits and ":" come before the id; the topic must be that id's own.
        let idStart = Partitioning.userTopicPrefix.utf8.count + 5
        guard topic.count > idStart, let user = String(validating: topic.dropFirst(idStart), as: UTF8.self),
            Partitioning.userTopic(for: user).utf8.elementsEqual(topic)
        else { return nil }
        return user
    }

    private static let userTopicFirstByte = Partitioning.userTopicPrefix.utf8.first!
}
