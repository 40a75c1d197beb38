import Foundation

/// `<data-dir>/lease`: the id of the lease this member was last granted, in ASCII decimal
/// (deploy/REPLICATION.md, section 3.2).
///
/// A member that restarts revokes that lease before granting a new one, so that a crashed
/// primary that comes back at once hands its ordinal over in milliseconds instead of after the
/// TTL. The file is an optimisation, not a safety rule: lost or stale, the old lease simply
/// expires on etcd's clock. So it is written atomically (a temporary file renamed over the
/// old one) but not synced.
struct LeaseFile: Sendable {
    /// The file's path.
    let path: String

    /// The lease id recorded, or nil when there is none (no file, or not a lease id).
    func read() -> Int64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Records `lease`.
    ///
    /// - Throws: The file system's error.
    func write(_ lease: Int64) throws {
        try Data("\(lease)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Forgets the lease (revoked: nothing to revoke at the next start).
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
