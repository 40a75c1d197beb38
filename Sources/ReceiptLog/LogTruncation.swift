import Glibc

/// The steps that cut a closed log back to a position, in an order that leaves a log that
/// opens after each one.
///
/// Snapshots past the cut go first, newest first: recovery would otherwise start from one and
/// restore state the cut removes. Then the segments that start past the cut, newest first, so
/// that those left stay contiguous. Last, the segment holding the cut is shortened to end
/// there. Each step is durable before the next starts (the directory is synced after each
/// deletion, so the file system cannot apply them out of order). A crash between two steps
/// therefore leaves a log that opens to a prefix of the old one, ending at a record boundary
/// at or after the cut (never before it), with no snapshot past its end; truncating again
/// finishes the cut.
struct LogTruncation {
    /// One change to the directory.
    enum Step: Equatable {
        /// Delete the snapshot file with this name.
        case removeSnapshot(String)
        /// Delete the segment file with this name.
        case removeSegment(String)
        /// Shorten the segment file with this name to `length` bytes: its header and the
        /// records before the cut.
        case shortenSegment(String, length: UInt64)
    }

    let directory: String
    /// The end of the log before the cut.
    let end: UInt64
    /// What to change, in order.
    let steps: [Step]

    /// Plans cutting the log in `directory` back to `position`, changing nothing.
    ///
    /// - Throws: ``LogError`` `.invalidArgument` when `position` is beyond the log's records,
    ///   `.notRecordBoundary` when it falls inside a record, `.compacted` when no snapshot at or
    ///   before it has the records from there to it (the log must be seeded from a snapshot
    ///   instead), the error opening would throw for damage other than a torn tail, or `.io`.
    init(directory: String, position: UInt64) throws(LogError) {
        let inspection = try LogInspection(directory: directory, checkingEverySnapshot: true)
        if let refusal = inspection.refusal(cuttingCorruption: false) { throw refusal }
        self.directory = directory
        self.end = inspection.endPosition
        guard position != self.end else {
            self.steps = []
            return
        }
        let segments = inspection.survivingSegments
        guard let holder = segments.lastIndex(where: { $0.start <= position }) else {
            throw Self.compacted(position)
        }
        guard position <= segments[holder].start + segments[holder].validLength else {
            throw LogError(
                code: .invalidArgument,
                message: "position \(position) is beyond the log's records (its end is \(self.end))"
            )
        }
        // Recovery will start from the newest snapshot left, and needs the records from it on.
        let base = inspection.snapshots.last { $0.isValid && $0.position <= position }?.position ?? 0
        guard let first = segments.lastIndex(where: { $0.start <= base }),
            segments[first...holder].indices.dropFirst().allSatisfy({
                segments[$0].start == segments[$0 - 1].start + segments[$0 - 1].validLength
            })
        else {
            throw Self.compacted(position)
        }
        let segment = segments[holder]
        let offset = Int(position - segment.start) + RecordFormat.segmentHeaderSize
        if position > segment.start && position < segment.start + segment.validLength {
            let boundary = try FileIO.withMappedFile(inspection.path(segment.name)) { bytes in
                SegmentScan.recordsBefore(bytes, target: offset) != nil
            }
            guard boundary else {
                throw LogError(
                    code: .notRecordBoundary,
                    message: "position \(position) falls inside a record",
                    file: inspection.path(segment.name),
                    offset: UInt64(offset)
                )
            }
        }
        var steps = inspection.snapshots.reversed().filter { $0.position > position }.map {
            Step.removeSnapshot($0.name)
        }
        steps += inspection.segments.reversed().filter { $0.start > position }.map { Step.removeSegment($0.name) }
        if segment.fileSize > UInt64(offset) {
            steps.append(.shortenSegment(segment.name, length: UInt64(offset)))
        }
        self.steps = steps
    }

    private static func compacted(_ position: UInt64) -> LogError {
        LogError(
            code: .compacted,
            message: "the log no longer holds the records from a snapshot at or before \(position) up to it"
        )
    }

    /// Makes one step and syncs it.
    func apply(_ step: Step) throws(LogError) {
        switch step {
        case .removeSnapshot(let name), .removeSegment(let name):
            try FileIO.unlink(self.directory + "/" + name)
            try FileIO.syncDirectory(self.directory)
        case .shortenSegment(let name, let length):
            let path = self.directory + "/" + name
            let fd = try FileIO.open(path, O_WRONLY)
            defer { FileIO.close(fd) }
            try FileIO.truncate(fd, to: length, path: path)
            try FileIO.dataSync(fd, path: path)
        }
    }
}
