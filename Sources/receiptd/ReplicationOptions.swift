import ArgumentParser
import ReceiptsReplication

/// The replication flags (deploy/REPLICATION.md, section 12.1), each with its `RECEIPTD_*`
/// variable: `--etcd` turns replication on, and etcd decides the member's role.
struct ReplicationOptions: ParsableArguments {
    @Option(
        help: """
            etcd client URLs (http://host:port), comma-separated: turns replication on, with roles decided \
            by a lease in etcd (RECEIPTD_ETCD; default off).
            """
    )
    var etcd: String?

    @Option(help: "Key prefix of this receiptd cluster in etcd (RECEIPTD_ETCD_PREFIX; default /receiptd/default).")
    var etcdPrefix: String?

    @Option(help: "This member's name, unique and stable (RECEIPTD_MEMBER; default $HOSTNAME).")
    var member: String?

    @Option(
        help: """
            Member sets in preference order, comma-separated; a member of the first may take an ordinal's first \
            term (RECEIPTD_MEMBERS; default this member's own set: its name without the trailing -<ordinal>).
            """
    )
    var members: String?

    @Option(
        help: "Replication endpoint, ROUTER (RECEIPTD_REPLICATION; default ipc://<data-dir>/replication.sock)."
    )
    var replication: String?

    @Option(
        help: """
            What an acknowledgement waits for: standby (durable on every in-sync standby too) or local \
            (RECEIPTD_REPLICATION_ACK; default standby).
            """
    )
    var replicationAck: String?

    @Option(
        help: """
            With no standby in sync: stall (refuse new ingest after the timeout) or local (acknowledge alone, \
            counted) (RECEIPTD_REPLICATION_FALLBACK; default stall).
            """
    )
    var replicationFallback: String?

    @Option(
        help: """
            Silence after which a replication session ends and a standby leaves the in-sync set \
            (RECEIPTD_REPLICATION_TIMEOUT_MS; default 1000).
            """
    )
    var replicationTimeoutMs: Int64?

    @Option(
        help: """
            Silence of the primary after which a standby of the in-sync set deposes it and campaigns, under \
            --replication-ack standby; 0 waits for the primary's lease to expire \
            (RECEIPTD_REPLICATION_TAKEOVER_MS; default 500).
            """
    )
    var replicationTakeoverMs: Int64?

    @Option(help: "Replication flow-control window (RECEIPTD_REPLICATION_WINDOW_BYTES; default 16777216).")
    var replicationWindowBytes: UInt64?

    @Option(
        help: """
            How long a primary keeps the log segments an absent standby still needs, in seconds; past it the \
            standby catches up from a snapshot (RECEIPTD_REPLICATION_PIN_TIMEOUT_S; default 600).
            """
    )
    var replicationPinTimeoutS: Int64?

    @Option(
        help: """
            How long a standby answers queries that accept a standby's answer after it last heard from a \
            primary; past it they are answered UNAVAILABLE (RECEIPTD_STANDBY_MAX_STALENESS_MS; default 2000).
            """
    )
    var standbyMaxStalenessMs: Int64?

    @Option(help: "The etcd lease's TTL in seconds, at least 2 (RECEIPTD_LEASE_TTL_S; default 3).")
    var leaseTtlS: Int?

    @Option(
        help: ArgumentHelp(
            "Test only: a fixed role without etcd, primary or standby=<primary's replication endpoint>.",
            visibility: .hidden
        )
    )
    var replicationFixedRole: String?

    /// The replication settings, or nil when replication is off.
    ///
    /// - Parameters:
    ///   - dataDirectory: Where the default replication endpoint lives.
    ///   - workerIndex: The member's ordinal, cut from its name for the member set.
    func settings(_ environment: Settings, dataDirectory: String, workerIndex: Int) throws -> ReplicationSettings? {
        let etcd = environment.value(etcd, "RECEIPTD_ETCD", "")
        let fixedRole = replicationFixedRole ?? ""
        guard !etcd.isEmpty || !fixedRole.isEmpty else { return nil }
        let role: ReplicationSettings.Role
        switch fixedRole {
        case "": role = .elected
        case "primary": role = .primary
        case let text where text.hasPrefix("standby="): role = .standby(primaryEndpoint: String(text.dropFirst(8)))
        default:
            throw ValidationError("--replication-fixed-role must be primary or standby=<endpoint>, got \(fixedRole)")
        }
        let member = environment.value(self.member, "RECEIPTD_MEMBER", environment.environment["HOSTNAME"] ?? "")
        guard !member.isEmpty else {
            throw ValidationError("replication needs --member (or RECEIPTD_MEMBER, or $HOSTNAME)")
        }
        var settings = ReplicationSettings(
            member: member,
            role: role,
            endpoint: environment.value(replication, "RECEIPTD_REPLICATION", "ipc://\(dataDirectory)/replication.sock")
        )
        let ownSet = Self.memberSet(of: member, workerIndex: workerIndex)
        let sets = environment.value(members, "RECEIPTD_MEMBERS", ownSet).split(separator: ",").map(String.init)
        settings.mayStartOrdinal = sets.first == ownSet
        let ack = environment.value(replicationAck, "RECEIPTD_REPLICATION_ACK", "standby")
        guard let acknowledgement = ReplicationSettings.Acknowledgement(rawValue: ack) else {
            throw ValidationError("--replication-ack must be local or standby, got \(ack)")
        }
        settings.acknowledgement = acknowledgement
        let fallbackText = environment.value(replicationFallback, "RECEIPTD_REPLICATION_FALLBACK", "stall")
        guard let fallback = ReplicationSettings.Fallback(rawValue: fallbackText) else {
            throw ValidationError("--replication-fallback must be stall or local, got \(fallbackText)")
        }
        settings.fallback = fallback
        settings.timeoutMilliseconds = try environment.number(
            replicationTimeoutMs,
            "RECEIPTD_REPLICATION_TIMEOUT_MS",
            settings.timeoutMilliseconds
        )
        settings.takeoverMilliseconds = try environment.number(
            replicationTakeoverMs,
            "RECEIPTD_REPLICATION_TAKEOVER_MS",
            settings.takeoverMilliseconds
        )
        // Half the takeover time is what a standby's own turns may lag before it counts the
        // silence again; its turns come a heartbeat apart when idle, so that half needs room.
        let shortest = 4 * settings.heartbeatMilliseconds
        guard settings.takeoverMilliseconds == 0 || settings.takeoverMilliseconds >= shortest else {
            throw ValidationError(
                "--replication-takeover-ms must be 0 or at least \(shortest) (four heartbeats), "
                    + "got \(settings.takeoverMilliseconds)"
            )
        }
        settings.windowBytes = try environment.number(
            replicationWindowBytes,
            "RECEIPTD_REPLICATION_WINDOW_BYTES",
            settings.windowBytes
        )
        settings.pinTimeoutMilliseconds =
            try environment.number(
                replicationPinTimeoutS,
                "RECEIPTD_REPLICATION_PIN_TIMEOUT_S",
                settings.pinTimeoutMilliseconds / 1000
            ) * 1000
        settings.standbyMaxStalenessMilliseconds = try environment.number(
            standbyMaxStalenessMs,
            "RECEIPTD_STANDBY_MAX_STALENESS_MS",
            settings.standbyMaxStalenessMilliseconds
        )
        guard settings.standbyMaxStalenessMilliseconds >= 1 else {
            throw ValidationError(
                "--standby-max-staleness-ms must be positive, got \(settings.standbyMaxStalenessMilliseconds)"
            )
        }
        return settings
    }

    /// The etcd client URLs, or nil without etcd.
    func etcdEndpoints(_ environment: Settings) -> [String]? {
        let text = environment.value(etcd, "RECEIPTD_ETCD", "")
        return text.isEmpty ? nil : text.split(separator: ",").map(String.init)
    }

    /// The key prefix in etcd.
    func prefix(_ environment: Settings) -> String {
        environment.value(etcdPrefix, "RECEIPTD_ETCD_PREFIX", "/receiptd/default")
    }

    /// The lease TTL in seconds.
    func leaseTTLSeconds(_ environment: Settings) throws -> Int {
        let seconds = try environment.number(leaseTtlS, "RECEIPTD_LEASE_TTL_S", 3)
        guard seconds >= 2 else { throw ValidationError("--lease-ttl-s must be at least 2, got \(seconds)") }
        return seconds
    }

    /// A member's set: its name without the trailing `-<ordinal>` (`receiptd-b-3` → `receiptd-b`).
    static func memberSet(of member: String, workerIndex: Int) -> String {
        let suffix = "-\(workerIndex)"
        return member.hasSuffix(suffix) ? String(member.dropLast(suffix.count)) : member
    }
}
