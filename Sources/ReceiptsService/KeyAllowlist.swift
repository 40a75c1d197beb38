import ZeroMQ

/// What a client key may do, by the allowlist file that names it.
public enum ClientRole: String, Sendable, CaseIterable, Hashable {
    /// May send events on both ingest endpoints.
    case gateway
    /// May query and subscribe.
    case reader
    /// May query and subscribe, and also compact and read the stats.
    case `operator`
}

/// One of receiptd's endpoints, as CURVE sees it: its ZAP domain and who may use it.
enum ServiceEndpoint: String, CaseIterable, Sendable {
    case ingest
    case ingestSubscribe = "ingest_sub"
    case publish
    case query
    /// The replication endpoint (deploy/REPLICATION.md, section 4.3): only the workers' own key,
    /// which every member of the cluster holds, gets in; no allowlist names it.
    case replication

    /// The role a client key gets on this endpoint, strongest first; nil if none of its roles fits.
    func role(among roles: Set<ClientRole>) -> ClientRole? {
        switch self {
        case .ingest, .ingestSubscribe: roles.contains(.gateway) ? .gateway : nil
        case .publish, .query: roles.contains(.operator) ? .operator : roles.contains(.reader) ? .reader : nil
        case .replication: nil
        }
    }
}

/// The client public keys allowed in, by role, read from one file per role.
///
/// Files are parsed by `CurveKey.keys(in:)`: one Z85 public key per line, optionally followed
/// by a name. A key may be listed in several files.
struct KeyAllowlist {
    private(set) var roles: [CurveKey: Set<ClientRole>] = [:]

    /// How many keys each role lists.
    var counts: [ClientRole: Int] {
        var counts: [ClientRole: Int] = [:]
        for keyRoles in roles.values {
            for role in keyRoles { counts[role, default: 0] += 1 }
        }
        return counts
    }

    /// Reads every role's file.
    /// - Throws: `ServiceError` (`.configuration`) naming the file and line that cannot be read
    ///   or is not a key; never the line's content.
    static func load(files: [ClientRole: String]) throws(ServiceError) -> KeyAllowlist {
        var allowlist = KeyAllowlist()
        for (role, path) in files {
            do {
                for key in try CurveKey.readAll(file: path) { allowlist.roles[key, default: []].insert(role) }
            } catch {
                throw ServiceError(.configuration, "the \(role) key list: \(error.message)")
            }
        }
        return allowlist
    }

    /// The role `key` gets on `endpoint`, or nil if it may not use it.
    func role(of key: CurveKey, on endpoint: ServiceEndpoint) -> ClientRole? {
        roles[key].flatMap { endpoint.role(among: $0) }
    }
}
