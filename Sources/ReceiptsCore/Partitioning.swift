/// The routing function shared by workers and gateways (SPEC §7).
///
/// A conversation is owned by exactly one worker ordinal. Jump consistent hashing moves only
/// about 1/n of the conversations when a StatefulSet grows from n-1 to n workers, and it
/// needs no ring state, so every gateway computes the same owner from the id alone.
public enum Partitioning {
    /// The most workers a cluster may have (ordinals are below it).
    public static let workerLimit = 1 << 16

    /// FNV-1a 64 of the conversation id's UTF-8 bytes: stable across processes and platforms
    /// (unlike `Hasher`, which is seeded per process).
    ///
    /// - Parameter conversation: The conversation id.
    /// - Returns: The 64-bit hash.
    public static func stableHash(_ conversation: String) -> UInt64 {
        if let hash = conversation.utf8.withContiguousStorageIfAvailable(fnv1a) { return hash }
        return fnv1a(Array(conversation.utf8))
    }

    static func fnv1a<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The worker ordinal that owns a conversation: jump consistent hash (Lamping & Veach 2014)
    /// of `stableHash`.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - workerCount: How many workers there are; values below 1 are treated as 1.
    /// - Returns: An ordinal in `0..<max(workerCount, 1)`.
    public static func owner(of conversation: String, workerCount: Int) -> Int {
        jumpHash(stableHash(conversation), buckets: max(workerCount, 1))
    }

    /// The partition of a conversation's PUB topic: the top 16 bits of `stableHash` after
    /// MurmurHash3's `fmix64` finalizer.
    ///
    /// FNV-1a alone leaves its top bits nearly unchanged when only the last characters of an id
    /// differ (`c-demo-1` ... `c-demo-6` would all share one partition, and 100,000 sequential
    /// ids only about 9,800 of the 65,536); the finalizer spreads such ids evenly. Ownership is
    /// unaffected: `owner(of:workerCount:)` uses the raw `stableHash`.
    ///
    /// - Parameter conversation: The conversation id.
    /// - Returns: The partition, `0...0xffff`.
    public static func partition(of conversation: String) -> UInt16 {
        UInt16(truncatingIfNeeded: finalized(stableHash(conversation)) >> 48)
    }

    /// MurmurHash3's `fmix64`: every input bit reaches every output bit.
    static func finalized(_ hash: UInt64) -> UInt64 {
        var hash = hash
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }

    /// The PUB topic of a conversation: `"<4 hex digits>:<conversation>"`, where the digits are
    /// its `partition(of:)`, so a gateway following many conversations can subscribe by prefix
    /// instead of by thousands of exact topics (libzmq #2258). The topic frame ends with one
    /// more byte, `topicEnd` (see `exactTopic(for:)`).
    ///
    /// - Parameter conversation: The conversation id.
    /// - Returns: The topic string.
    public static func topic(for conversation: String) -> String {
        hexPartition(of: conversation) + ":" + conversation
    }

    /// The byte that ends every topic frame. Ids hold no NUL (the wire refuses one), so a
    /// subscription to a whole frame, `exactTopic(for:)` or `exactUserTopic(for:)`, matches that
    /// one conversation or user, while `topic(for:)` alone is a prefix that also matches every
    /// id that extends it.
    public static let topicEnd: UInt8 = 0
    private static let topicEndCharacter = String(UnicodeScalar(topicEnd))

    /// A conversation's whole topic frame, `topic(for:)` and the NUL `topicEnd`: as a SUB filter,
    /// it follows that conversation and no other.
    ///
    /// - Parameter conversation: The conversation id.
    /// - Returns: The frame as a string (its last character is U+0000).
    public static func exactTopic(for conversation: String) -> String {
        topic(for: conversation) + topicEndCharacter
    }

    /// A user's whole read-state topic frame, `userTopic(for:)` and the NUL `topicEnd`: as a SUB
    /// filter, it follows that user and no other.
    ///
    /// - Parameter user: The user id.
    /// - Returns: The frame as a string (its last character is U+0000).
    public static func exactUserTopic(for user: String) -> String {
        userTopic(for: user) + topicEndCharacter
    }

    /// The first bytes of every user's read-state topic; no conversation topic starts with them.
    public static let userTopicPrefix = "u:"

    /// The 16 one-hex-digit prefixes: together they match every conversation topic and no user
    /// topic (a subscriber of `""` would follow every user's read state too).
    public static let conversationTopicPrefixes = "0123456789abcdef".map { String($0) }

    /// The PUB topic of a user's own read state: `"u:<4 hex digits>:<user>"`, the digits being
    /// the user id's `partition(of:)`. It starts with "u", which no conversation topic (4 hex
    /// digits first) does, so no conversation prefix matches it and no user prefix matches a
    /// conversation topic; a gateway follows a partition of users by the prefix `"u:<digits>:"`.
    /// The topic frame ends with one more byte, `topicEnd` (see `exactUserTopic(for:)`).
    ///
    /// - Parameter user: The user id.
    /// - Returns: The topic string.
    public static func userTopic(for user: String) -> String {
        userTopicPrefix + hexPartition(of: user) + ":" + user
    }

    /// `partition(of:)` as 4 lowercase hex digits.
    public static func hexPartition(of id: String) -> String {
        hexPartition(partition(of: id))
    }

    /// A partition as the 4 lowercase hex digits of topics.
    public static func hexPartition(_ partition: UInt16) -> String {
        let digits = String(partition, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Jump consistent hash of a 64-bit key into `buckets` buckets.
    static func jumpHash(_ key: UInt64, buckets: Int) -> Int {
        var key = key
        var bucket: Int64 = -1
        var next: Int64 = 0
        while next < Int64(buckets) {
            bucket = next
            key = key &* 2_862_933_555_777_941_757 &+ 1
            next = Int64(Double(bucket + 1) * (Double(UInt64(1) << 31) / Double((key >> 33) + 1)))
        }
        return Int(bucket)
    }
}
