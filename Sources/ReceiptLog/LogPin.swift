/// Keeps compaction from deleting the segments a reader still needs: the one holding
/// ``position`` and every later one, until ``release()``.
///
/// A shipper pins the position its standby has confirmed (``ReceiptLog/pin(_:)``), reads ahead
/// with a ``LogCursor``, and moves the pin forward as the standby confirms more. Compaction
/// goes on writing snapshots, and deletes what lies before the lowest pin; the segments a pin
/// kept go at the first compaction after it moved or was released. Released when the last
/// reference goes, if not before, so that a forgotten pin cannot hold disk space for ever.
public final class LogPin: Sendable {
    private let writer: LogWriter
    /// The pin's key in ``WriterState/pins``.
    private let key: Int

    init(writer: LogWriter, key: Int) {
        self.writer = writer
        self.key = key
    }

    deinit {
        self.release()
    }

    /// The position pinned, or nil once released.
    public var position: LogPosition? {
        self.writer.state.withLock { $0.pins[self.key] }.map { LogPosition(offset: $0) }
    }

    /// Moves the pin forward, so that compaction may delete what only the old position kept.
    ///
    /// - Parameter position: At or after the pinned position, at most the log's appended end.
    /// - Throws: ``LogError`` `.invalidArgument` for a position behind the pin's or beyond the
    ///   log's end, or when the pin was released.
    public func advance(to position: LogPosition) throws(LogError) {
        try self.writer.state.withLock { state throws(LogError) in
            guard let pinned = state.pins[self.key] else {
                throw LogError(code: .invalidArgument, message: "the pin was released")
            }
            guard pinned <= position.offset, position.offset <= state.appended else {
                throw LogError(
                    code: .invalidArgument,
                    message: "a pin at \(pinned) cannot move to \(position.offset) (the log ends at \(state.appended))"
                )
            }
            state.pins[self.key] = position.offset
        }
    }

    /// Lets compaction delete what only this pin kept; calling it again does nothing.
    public func release() {
        self.writer.state.withLock { _ = $0.pins.removeValue(forKey: self.key) }
    }
}
