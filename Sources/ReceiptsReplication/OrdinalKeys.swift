import Foundation

/// Where an ordinal's keys live in the coordination service and how their values are written
/// (deploy/REPLICATION.md, section 3.2): one place for the layout, shared by `EtcdCoordinator`
/// and `InMemoryCoordinator` so that both read and write the same bytes.
package struct OrdinalKeys: Sendable, Equatable {
    /// A key as the service holds it, with the revisions a campaign compares.
    package struct Stored: Sendable, Equatable {
        /// The whole key.
        package var key: String
        /// The value's bytes.
        package var value: [UInt8]
        /// The revision that created the key (0: absent).
        package var createRevision: Int64
        /// The revision that last wrote it.
        package var modRevision: Int64

        /// A stored key.
        package init(key: String, value: [UInt8], createRevision: Int64, modRevision: Int64) {
            self.key = key
            self.value = value
            self.createRevision = createRevision
            self.modRevision = modRevision
        }
    }

    /// `<prefix>/ordinals/<k>/`: every key of the ordinal starts with it.
    package let directory: String
    /// `<prefix>/ordinals/<k>/primary`: a `PrimaryRecord`, attached to the holder's lease.
    package var primary: String { directory + "primary" }
    /// `<prefix>/ordinals/<k>/term`: the latest term, in ASCII decimal.
    package var term: String { directory + "term" }
    /// `<prefix>/ordinals/<k>/in-sync`: an `InSyncRecord`.
    package var inSync: String { directory + "in-sync" }
    /// `<prefix>/ordinals/<k>/handover`: a `HandOverRecord`.
    package var handOver: String { directory + "handover" }

    /// The keys of `ordinal` under `prefix` (a trailing `/` on the prefix is ignored).
    package init(prefix: String, ordinal: Int) {
        var prefix = prefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        directory = "\(prefix)/ordinals/\(ordinal)/"
    }

    /// The end of the ordinal's key range, exclusive: the directory with its last byte plus one
    /// (`…/3/` → `…/30`), which is how etcd names "every key with this prefix".
    package var rangeEnd: [UInt8] {
        var bytes = Array(directory.utf8)
        bytes[bytes.count - 1] += 1
        return bytes
    }

    /// Whether `key` is one of this ordinal's keys.
    package func contains(_ key: String) -> Bool { key.hasPrefix(directory) }

    /// The primary key's value for `record`.
    package static func value(_ record: PrimaryRecord) -> [UInt8] { encode(record) }

    /// The term key's value: the term in ASCII decimal.
    package static func value(term: UInt64) -> [UInt8] { Array(String(term).utf8) }

    /// The in-sync key's value for `record`.
    package static func value(_ record: InSyncRecord) -> [UInt8] { encode(record) }

    /// The handover key's value for `record`.
    package static func value(_ record: HandOverRecord) -> [UInt8] { encode(record) }

    /// The ordinal's state from its keys as read at `revision` (keys of other ordinals, and keys
    /// this build does not know, such as `members/…`, are ignored).
    ///
    /// - Throws: `CoordinationError` naming the key whose value is not what section 3.2 says.
    package func state(from keys: [Stored], revision: Int64) throws(CoordinationError) -> OrdinalState {
        var state = OrdinalState(revision: revision)
        for stored in keys {
            switch stored.key {
            case primary:
                state.primary = try decode(PrimaryRecord.self, stored)
                state.primaryRevision = stored.createRevision
            case term:
                guard let text = String(validating: stored.value, as: UTF8.self), let value = UInt64(text) else {
                    throw CoordinationError(
                        .malformed,
                        "the key \(stored.key) does not hold a decimal term: \(describe(stored.value))"
                    )
                }
                state.term = value
                state.termRevision = stored.modRevision
            case inSync:
                state.inSync = try decode(InSyncRecord.self, stored)
                state.inSyncRevision = stored.modRevision
            case handOver:
                state.handOver = try decode(HandOverRecord.self, stored)
            default:
                continue
            }
        }
        return state
    }

    private static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The record types hold only strings, numbers and arrays of strings: encoding cannot fail.
        return (try? Array(encoder.encode(value))) ?? []
    }

    private func decode<Value: Decodable>(_ type: Value.Type, _ stored: Stored) throws(CoordinationError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(stored.value))
        } catch {
            throw CoordinationError(
                .malformed,
                "the key \(stored.key) does not hold a \(type) document: \(describe(stored.value))",
                cause: error
            )
        }
    }

    private func describe(_ value: [UInt8]) -> String {
        let text = String(decoding: value.prefix(200), as: UTF8.self)
        return value.count > 200 ? "\"\(text)…\" (\(value.count) bytes)" : "\"\(text)\""
    }
}
