/// The shape of a simulated chat load: how many gateways, conversations and users, how the
/// conversations are sized, and how many events are re-sent.
struct WorkloadShape: Sendable, CustomStringConvertible {
    /// Gateways, each with its own event source id and its own socket.
    var gateways = 4
    /// Conversations, spread over the gateways (conversation i belongs to gateway i % gateways).
    var conversations = 20_000
    /// Members of a group conversation (direct ones always have two).
    var groupSizes: ClosedRange<Int> = 3...12
    /// Share of conversations that are direct.
    var directFraction = 0.7
    /// Distinct users the members are drawn from.
    var users = 50_000
    /// Share of events a gateway sends a second time (same event id: a duplicate).
    var duplicateFraction = 0.01
    /// Seed of the deterministic generator.
    var seed: UInt64 = 1
    /// Only `messageSent` events (memory measurements): no deliveries, no reads.
    var messagesOnly = false
    /// Recipients each message names as mentioned (as many as it has, if fewer); above 0, one
    /// message in ten also mentions everyone.
    var mentionedPerMessage = 0
    /// Share of messages sent as a reply in the thread of the conversation's previous message
    /// (whose deliveries and reads are then in that thread).
    var replyShare = 0.0

    var description: String {
        let kinds =
            (messagesOnly ? "messages only" : "messages, deliveries, reads")
            + (mentionedPerMessage > 0 ? ", \(mentionedPerMessage) mentions per message" : "")
            + (replyShare > 0 ? ", \(Int(replyShare * 100))% thread replies" : "")
        return "\(gateways) gateways, \(conversations) conversations (\(Int(directFraction * 100))% direct, "
            + "groups of \(groupSizes.lowerBound)-\(groupSizes.upperBound)), \(users) users, \(kinds), "
            + "\(duplicateFraction * 100)% duplicates"
    }
}
