public import ReceiptsCore

/// A record of receiptd's log: the one place that knows the record types and how each one's
/// payload is laid out, for the service that writes and replays them and for the tools.
///
/// A batch record holds the server time its frame was applied at, then the frame exactly as
/// the gateway sent it: logging the raw frame costs no re-encoding on the hot path, and
/// replaying it through the same engine at the same time gives the same state, because the
/// engine is deterministic. A retention record holds a cutoff; it is written before compaction
/// applies retention to the live state, so that a replay after a crash expires exactly the
/// same messages at exactly the same point of the history.
///
/// A batch's frame is borrowed: a record read from a payload is valid only while the payload is.
public enum LogRecord {
    /// A batch from the acknowledged ingest endpoint, applied at `time`.
    case acknowledgedBatch(time: Timestamp, frame: UnsafeRawBufferPointer)
    /// A batch from the fire-and-forget ingest endpoint, applied at `time`.
    case unacknowledgedBatch(time: Timestamp, frame: UnsafeRawBufferPointer)
    /// Messages sent before `cutoff` leave the state.
    case retention(cutoff: Timestamp)

    /// The record types, as stored in the log.
    public enum Kind: UInt8, Sendable {
        case acknowledgedBatch = 1
        case unacknowledgedBatch = 2
        case retention = 3
    }

    /// Why a stored record cannot be read.
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    private static let timeSize = MemoryLayout<Int64>.size

    /// The record's type.
    public var kind: Kind {
        switch self {
        case .acknowledgedBatch: .acknowledgedBatch
        case .unacknowledgedBatch: .unacknowledgedBatch
        case .retention: .retention
        }
    }

    /// The payload stored in the log.
    public func payload() -> [UInt8] {
        switch self {
        case .acknowledgedBatch(let time, let frame), .unacknowledgedBatch(let time, let frame):
            [UInt8](unsafeUninitializedCapacity: Self.timeSize + frame.count) { buffer, count in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                raw.storeBytes(of: time.milliseconds.littleEndian, as: Int64.self)
                if let base = frame.baseAddress, !frame.isEmpty {
                    (raw.baseAddress! + Self.timeSize).copyMemory(from: base, byteCount: frame.count)
                }
                count = Self.timeSize + frame.count
            }
        case .retention(let cutoff):
            withUnsafeBytes(of: cutoff.milliseconds.littleEndian) { Array($0) }
        }
    }

    /// Reads a record back from its stored type and payload.
    ///
    /// - Throws: `Invalid` for a type this build does not know, or a payload too short for
    ///   its time or of the wrong size for a cutoff.
    public init(type: UInt8, payload: UnsafeRawBufferPointer) throws(Invalid) {
        switch Kind(rawValue: type) {
        case .acknowledgedBatch, .unacknowledgedBatch:
            guard payload.count >= Self.timeSize else {
                throw Invalid(description: "a batch record of \(payload.count) bytes is too short for its time")
            }
            let time = Timestamp(milliseconds: Int64(littleEndian: payload.loadUnaligned(as: Int64.self)))
            let frame = UnsafeRawBufferPointer(rebasing: payload[Self.timeSize...])
            self =
                type == Kind.acknowledgedBatch.rawValue
                ? .acknowledgedBatch(time: time, frame: frame) : .unacknowledgedBatch(time: time, frame: frame)
        case .retention:
            guard payload.count == Self.timeSize else {
                throw Invalid(description: "a retention record of \(payload.count) bytes is not one cutoff")
            }
            self = .retention(
                cutoff: Timestamp(milliseconds: Int64(littleEndian: payload.loadUnaligned(as: Int64.self)))
            )
        case nil:
            throw Invalid(description: "a record of unknown type \(type)")
        }
    }
}
