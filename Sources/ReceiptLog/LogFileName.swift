/// The names of the files in a log directory, and parsing them back.
///
/// Positions are zero-padded to 20 digits so that names sort in position order.
enum LogFileName {
    /// A file the log recognises, with the position its name carries.
    enum Parsed: Equatable {
        case segment(start: UInt64)
        case snapshot(position: UInt64)
        case snapshotTemporary
        /// The marker of a seed in progress (``seedingMarker``).
        case seedingMarker
    }

    static let lock = "LOCK"

    /// Present while ``ReceiptLog/seed(directory:from:beforeCompleting:)`` replaces the log's
    /// files: a directory holding it opens as an empty log (see `LogSeeding`).
    static let seedingMarker = "SEEDING"

    /// The suffix of a snapshot file that recovery set aside as corrupt.
    private static let quarantineSuffix = ".corrupt"

    static func segment(start: UInt64) -> String {
        "segment-\(padded(start)).log"
    }

    static func snapshot(position: UInt64) -> String {
        "snapshot-\(padded(position)).snap"
    }

    static func temporary(forSnapshot name: String) -> String {
        name + ".tmp"
    }

    /// The file a snapshot arriving from a primary is written to (``IncomingSnapshot``): a
    /// snapshot temporary to ``parse(_:)``, so that recovery removes one a crash left, and
    /// distinct from the temporary of a snapshot the log writes itself.
    static func incoming(snapshotAt position: UInt64) -> String {
        "snapshot-\(padded(position)).incoming.snap.tmp"
    }

    static func quarantined(forSnapshot name: String) -> String {
        name + quarantineSuffix
    }

    /// Whether `name` is a snapshot file set aside as corrupt (``quarantined(forSnapshot:)``).
    static func isQuarantinedSnapshot(_ name: String) -> Bool {
        guard name.hasSuffix(quarantineSuffix),
            case .snapshot = parse(String(name.dropLast(quarantineSuffix.count)))
        else { return false }
        return true
    }

    static func parse(_ name: String) -> Parsed? {
        if name == seedingMarker {
            return .seedingMarker
        }
        if name.hasPrefix("snapshot-") && name.hasSuffix(".snap.tmp") {
            return .snapshotTemporary
        }
        if let start = number(in: name, prefix: "segment-", suffix: ".log") {
            return .segment(start: start)
        }
        if let position = number(in: name, prefix: "snapshot-", suffix: ".snap") {
            return .snapshot(position: position)
        }
        return nil
    }

    private static func padded(_ value: UInt64) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    private static func number(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.count == 20, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return UInt64(digits)
    }
}
