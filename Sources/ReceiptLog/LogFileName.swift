/// The names of the files in a log directory, and parsing them back.
///
/// Positions are zero-padded to 20 digits so that names sort in position order.
enum LogFileName {
    /// A file the log recognises, with the position its name carries.
    enum Parsed: Equatable {
        case segment(start: UInt64)
        case snapshot(position: UInt64)
        case snapshotTemporary
    }

    static let lock = "LOCK"

    static func segment(start: UInt64) -> String {
        "segment-\(padded(start)).log"
    }

    static func snapshot(position: UInt64) -> String {
        "snapshot-\(padded(position)).snap"
    }

    static func temporary(forSnapshot name: String) -> String {
        name + ".tmp"
    }

    static func quarantined(forSnapshot name: String) -> String {
        name + ".corrupt"
    }

    static func parse(_ name: String) -> Parsed? {
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
