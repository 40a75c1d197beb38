import ReceiptsWire

/// Where a cluster's workers listen, and how many of them share the conversations.
///
/// Two numbers are kept apart. ``workerCount`` is the *routing* count: every event and query
/// goes first to the owner that `Partitioning.owner(of:workerCount:)` names for it, as the
/// workers themselves compute it. The endpoints the client may talk to can reach further: while
/// the worker count changes (SCALING.md), the new workers of a scale-up already serve the
/// conversations moved to them, and a worker that no longer owns a conversation answers
/// NOT_OWNER naming its owner, which may be an ordinal at or above the routing count. The
/// client follows such an answer whenever ``worker(_:)`` knows that ordinal's endpoints.
///
/// A replicated ordinal (deploy/REPLICATION.md) is served by several members, receiptd processes
/// of which one at a time is the primary; the others answer NOT_PRIMARY naming it.
/// ``init(members:workerCount:)`` and ``init(workerCount:members:ingest:query:publish:)`` list
/// them; the client talks to one member per ordinal, starting with the first, and follows
/// NOT_PRIMARY answers and silent members to the others. A cluster made without members has
/// one per ordinal, and behaves as before replication.
public struct Cluster: Hashable, Sendable {
    /// One worker's endpoints: a receiptd process, the only member of its ordinal or one of
    /// several.
    public struct Worker: Hashable, Sendable {
        /// The acknowledged ingest endpoint (ROUTER).
        public var ingest: String
        /// The query endpoint (ROUTER).
        public var query: String
        /// The status update endpoint (PUB).
        public var publish: String
        /// The member's name (receiptd's `--member`, e.g. `receiptd-b-3`), which a NOT_PRIMARY
        /// answer names the primary by; empty for an unreplicated worker, or to match the
        /// answer's endpoints instead.
        public var member: String

        /// Creates a worker's endpoints.
        /// - Parameters:
        ///   - ingest: The acknowledged ingest endpoint.
        ///   - query: The query endpoint.
        ///   - publish: The status update endpoint.
        ///   - member: The member's name, for a member of a replicated ordinal.
        public init(ingest: String, query: String, publish: String, member: String = "") {
            self.ingest = ingest
            self.query = query
            self.publish = publish
            self.member = member
        }

        /// The `ipc://` endpoints receiptd binds by default under its data directory.
        /// - Parameters:
        ///   - dataDirectory: The worker's `--data-dir`.
        ///   - member: The member's name, for a member of a replicated ordinal.
        public init(dataDirectory: String, member: String = "") {
            let endpoints = WorkerEndpoints(dataDirectory: dataDirectory)
            self.init(ingest: endpoints.ingest, query: endpoints.query, publish: endpoints.publish, member: member)
        }

        /// Whether a NOT_PRIMARY answer's primary is this member: by name if both have one,
        /// else by an advertised endpoint.
        func isPrimary(_ primary: ErrorReply.Primary) -> Bool {
            if !member.isEmpty { return member == primary.member }
            return (!primary.ingest.isEmpty && primary.ingest == ingest)
                || (!primary.query.isEmpty && primary.query == query)
        }
    }

    /// The highest ordinal a client ever talks to. A NOT_OWNER answer naming a higher one is
    /// not followed: its per-worker sockets are made for every ordinal up to the one reached,
    /// so a garbled ordinal must not make millions of them.
    public static let maxOrdinal = 1023

    /// The members listed, indexed by ordinal, each list in the order the client tries them
    /// (one member for an unreplicated worker): at least the routing count's ordinals, possibly
    /// more (the new workers of a scale-up the client is not routing to yet).
    public var members: [[Worker]]

    /// The first member of each ordinal listed (an ordinal listed without members, which the
    /// client's configuration check refuses, is left out); setting it lists one member per
    /// ordinal.
    public var workers: [Worker] {
        get { members.compactMap(\.first) }
        set { members = newValue.map { [$0] } }
    }

    /// The routing count given at `init` or set later; nil means `members.count`.
    private var routingCount: Int?

    /// The endpoint templates of a templated cluster, which resolve any ordinal.
    private var templates: Worker?

    /// The member sets a templated cluster resolves `{member}` with; empty for none.
    private var memberSets: [String] = []

    /// A cluster of the given workers.
    /// - Parameters:
    ///   - workers: One entry per ordinal, in order; at least `workerCount` of them.
    ///   - workerCount: How many workers share the conversations, for routing; nil for
    ///     `workers.count`. Fewer than `workers.count` lets the client reach the workers above
    ///     it (a scale-up's new ordinals) when a NOT_OWNER answer names them, before the client
    ///     is configured with the new count.
    public init(workers: [Worker], workerCount: Int? = nil) {
        self.init(members: workers.map { [$0] }, workerCount: workerCount)
    }

    /// A cluster of replicated ordinals: the members of each.
    /// - Parameters:
    ///   - members: Per ordinal, in order, its members (with their ``Worker/member`` names, or
    ///     matched by endpoints) in the order the client tries them; ordinals with an empty list are
    ///     refused by the client's configuration check.
    ///   - workerCount: As for ``init(workers:workerCount:)``.
    public init(members: [[Worker]], workerCount: Int? = nil) {
        self.members = members
        self.routingCount = workerCount
    }

    /// A cluster whose endpoints follow a pattern, as a StatefulSet's pods do.
    ///
    /// `{index}` in each template becomes the ordinal, e.g.
    /// `tcp://receiptd-{index}.receiptd:7001` for a headless Service named `receiptd`. The
    /// templates are kept, so ``worker(_:)`` resolves ordinals at and above `workerCount` too:
    /// after a scale-up the client follows NOT_OWNER answers to the new pods before it is
    /// configured with the new count.
    /// - Parameters:
    ///   - workerCount: How many workers share the conversations (the StatefulSet's `replicas`
    ///     the client routes by).
    ///   - ingest: The ingest endpoint template.
    ///   - query: The query endpoint template.
    ///   - publish: The PUB endpoint template.
    public init(workerCount: Int, ingest: String, query: String, publish: String) {
        self.init(workerCount: workerCount, members: [], ingest: ingest, query: query, publish: publish)
    }

    /// A cluster of replicated ordinals whose endpoints follow a pattern, as the StatefulSets of
    /// a replicated deployment do (one per member set, deploy/REPLICATION.md section 14).
    ///
    /// `{member}` in each template becomes a member set's name and `{index}` the ordinal, and
    /// the member is named `<set>-<ordinal>`, as receiptd's pods are: with member sets
    /// `["receiptd", "receiptd-b"]` and `tcp://{member}-{index}.receiptd:7001`, ordinal 3 is
    /// served by `receiptd-3` and `receiptd-b-3`.
    /// - Parameters:
    ///   - workerCount: How many workers share the conversations.
    ///   - members: The member sets, in the order the client tries them; empty for one unnamed member
    ///     per ordinal (``init(workerCount:ingest:query:publish:)``).
    ///   - ingest: The ingest endpoint template.
    ///   - query: The query endpoint template.
    ///   - publish: The PUB endpoint template.
    public init(workerCount: Int, members: [String], ingest: String, query: String, publish: String) {
        let templates = Worker(ingest: ingest, query: query, publish: publish)
        self.templates = templates
        self.memberSets = members
        self.members = (0..<max(workerCount, 0)).map { Self.resolve(templates, memberSets: members, ordinal: $0) }
        self.routingCount = nil
    }

    /// How many workers share the conversations: the count every owner is computed with. It is
    /// `workers.count` unless given (or set) otherwise.
    public var workerCount: Int {
        get { routingCount ?? members.count }
        set { routingCount = newValue }
    }

    /// The ordinals the client connects to from the start: those it routes to and any listed
    /// beyond them. Subscriptions listen to all of them; user-wide events go to all of them.
    public var ordinals: Range<Int> {
        0..<min(max(members.count, workerCount, 0), Self.maxOrdinal + 1)
    }

    /// One worker's endpoints: its ordinal's first member.
    /// - Parameter ordinal: The worker's ordinal.
    /// - Returns: As ``members(of:)``'s first; nil for an ordinal the cluster cannot name.
    public func worker(_ ordinal: Int) -> Worker? {
        members(of: ordinal).first
    }

    /// The members of an ordinal.
    /// - Parameter ordinal: The ordinal.
    /// - Returns: The listed members, or for a templated cluster the templates resolved for
    ///   `ordinal`; empty for an ordinal the cluster cannot name (negative, above ``maxOrdinal``,
    ///   or past the list of a cluster without templates).
    public func members(of ordinal: Int) -> [Worker] {
        guard ordinal >= 0, ordinal <= Self.maxOrdinal else { return [] }
        if ordinal < members.count { return members[ordinal] }
        return templates.map { Self.resolve($0, memberSets: memberSets, ordinal: ordinal) } ?? []
    }

    /// The members of `ordinal` by the templates: one per member set, or one unnamed member.
    private static func resolve(_ templates: Worker, memberSets: [String], ordinal: Int) -> [Worker] {
        let index = String(ordinal)
        guard !memberSets.isEmpty else {
            return [
                Worker(
                    ingest: templates.ingest.replacingAll("{index}", with: index),
                    query: templates.query.replacingAll("{index}", with: index),
                    publish: templates.publish.replacingAll("{index}", with: index)
                )
            ]
        }
        return memberSets.map { set in
            func resolved(_ template: String) -> String {
                template.replacingAll("{member}", with: set).replacingAll("{index}", with: index)
            }
            return Worker(
                ingest: resolved(templates.ingest),
                query: resolved(templates.query),
                publish: resolved(templates.publish),
                member: "\(set)-\(index)"
            )
        }
    }
}

extension String {
    /// The string with every occurrence of `target` replaced (without Foundation).
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
