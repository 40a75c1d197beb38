extension ReceiptLog {
    /// Cuts a closed log back to `position`, durably: an old primary drops the records the new
    /// primary's history does not have, then reopens its log and follows.
    ///
    /// The log must be closed (this takes its lock): the state built from the records being cut
    /// is rebuilt by opening the log again, and with no log open no writer, cursor or reader can
    /// see a file change under it. Snapshots past `position` are deleted, then the segments
    /// after it, then the segment holding it is shortened, each step synced. A crash part-way
    /// leaves a log that opens to a prefix of the old one, ending at a record boundary at or
    /// after `position` and never before it; calling this again finishes the cut (see
    /// `LogTruncation`).
    ///
    /// - Parameters:
    ///   - directory: The log directory.
    ///   - position: Where the log is to end: the end of a record, at least the position of a
    ///     snapshot the log keeps (or the log's start when it keeps every segment from there).
    /// - Returns: Where the log ended before the cut.
    /// - Throws: ``LogError`` `.locked` while the log is open, `.invalidArgument` for a position
    ///   beyond the log's end, `.notRecordBoundary` for one inside a record, `.compacted` when
    ///   the records before `position` are no longer all there to recover from, the error
    ///   opening would throw for a damaged log, `.io` or `.fsyncFailed`.
    @discardableResult
    public static func truncate(directory: String, to position: LogPosition) throws(LogError) -> LogPosition {
        let directoryLock = try LogDirectoryLock.acquire(directory)
        defer { directoryLock.release() }
        let truncation = try LogTruncation(directory: directory, position: position.offset)
        for step in truncation.steps {
            try truncation.apply(step)
        }
        return LogPosition(offset: truncation.end)
    }
}
