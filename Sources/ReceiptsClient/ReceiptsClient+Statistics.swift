extension ReceiptsClient {
    /// What the client has done since it started: for dashboards and for tests that must see a
    /// retry or a repair happen.
    public struct Statistics: Hashable, Sendable {
        /// Ingest frames sent (first attempts).
        public var framesSent: Int
        /// Ingest frames sent again after their acknowledgement timed out, a pause an answer
        /// asked for, or to another member of a replicated ordinal.
        public var framesResent: Int
        /// Ingest frames a worker answered UNAVAILABLE (each re-sent after a pause).
        public var unavailableReplies: Int
        /// Replies that could not be decoded or did not fit their request.
        public var malformedReplies: Int
        /// Events a worker answered NOT_OWNER for and that went on to the owner it named.
        public var redirects: Int
        /// Events a worker rejected as `moving` (their conversation was being copied to another
        /// worker) and that were sent again, with the same id, after a pause.
        public var movingRetries: Int
        /// Queries (typed ones and snapshot repairs) a worker answered NOT_OWNER for and that
        /// went on to the owner it named.
        public var queryRedirects: Int
        /// Queries (typed ones and snapshot repairs) asked again after an UNAVAILABLE reply, or
        /// after a NOT_PRIMARY reply that named no primary.
        public var queryRetries: Int
        /// Queries that got no reply in time (snapshot repairs included).
        public var queryTimeouts: Int
        /// Snapshots fetched for subscriptions (start, gaps, new publisher runs, slow consumers).
        public var snapshotRepairs: Int
        /// Updates a subscription's consumer had no room for (later repaired by snapshot).
        public var updatesCoalesced: Int
        /// Times a replicated ordinal's client moved to another member: the primary a
        /// NOT_PRIMARY answer named, or the next member after a silent one.
        public var primarySwitches: Int
        /// Queries a standby answered (``ReadPreference/standbyPreferred``): replies that carry
        /// a standby's `served_by`.
        public var standbyReads: Int
        /// Queries for a standby that went to the primary instead: the standby answered
        /// UNAVAILABLE (cut off from its primary past its staleness bound) or NOT_PRIMARY, or
        /// stayed silent for the acknowledgement timeout.
        public var standbyFallbacks: Int
    }
}
