import Glibc
import Logging

/// A segment's valid range, as recovery left it, for replay to walk.
struct ReplaySegment: Sendable {
    var path: String
    var start: UInt64
    var length: UInt64
}

extension ReceiptLog {
    /// What recovery hands to the new log.
    struct Recovered {
        var report: RecoveryReport
        /// The snapshot to start from and its file (checked).
        var snapshot: (position: LogPosition, path: String)?
        var replayStart: UInt64
        var replaySegments: [ReplaySegment]
        var segments: [UInt64]
        var snapshots: [UInt64]
        var active: LogWriter.ActiveSegment
    }

    /// Inspects the directory, applies what recovery may change (discard an interrupted seed,
    /// truncate a torn tail, cut at corruption when told, set aside corrupt snapshots, remove
    /// snapshot temporaries), and opens the segment to append to.
    static func recover(_ configuration: LogConfiguration, logger: Logger) throws(LogError) -> Recovered {
        let directory = configuration.directory
        var inspection = try LogInspection(directory: directory, checkingEverySnapshot: false)
        var report = RecoveryReport()
        if inspection.interruptedSeed {
            let removed = try LogSeeding.discardInterrupted(directory)
            report.discardedInterruptedSeed = true
            logger.warning(
                "discarded an interrupted seed: the log starts empty",
                metadata: ["log.directory": "\(directory)", "log.removed_files": "\(removed.count)"]
            )
            inspection = try LogInspection(directory: directory, checkingEverySnapshot: false)
        }
        report.snapshotPosition = inspection.recoverySnapshot.map { LogPosition(offset: $0.position) }

        if let refusal = inspection.refusal(cuttingCorruption: configuration.cutCorruptionAtStart) {
            throw refusal
        }
        if let damage = inspection.damage {
            let path = inspection.path(damage.file)
            if let cut = inspection.cut {
                try Self.apply(cut, inspection)
            }
            report.truncatedBytes = damage.droppedBytes
            report.droppedRecords = damage.droppedRecords
            report.truncatedFile = damage.file
            report.damage = damage
            logger.warning(
                damage.isTruncatableTail ? "truncated torn tail of the log" : "cut the log at corruption, as asked",
                metadata: [
                    "log.file": "\(path)", "log.offset": "\(damage.offset)", "log.damage": "\(damage.kind)",
                    "log.truncated_bytes": "\(damage.droppedBytes)", "log.dropped_records": "\(damage.droppedRecords)",
                ]
            )
        }

        for snapshot in inspection.snapshots where !snapshot.isValid {
            let path = inspection.path(snapshot.name)
            try FileIO.rename(path, to: inspection.path(LogFileName.quarantined(forSnapshot: snapshot.name)))
            report.invalidSnapshots.append(snapshot.name)
            logger.warning(
                "set aside a corrupt snapshot",
                metadata: ["log.file": "\(path)", "log.position": "\(snapshot.position)"]
            )
        }
        for name in inspection.temporaryFiles {
            try FileIO.unlink(inspection.path(name))
            report.removedTemporaryFiles.append(name)
            logger.debug("removed an interrupted snapshot", metadata: ["log.file": "\(inspection.path(name))"])
        }

        let survivors = inspection.survivingSegments
        let end = inspection.endPosition
        var segments = survivors.map(\.start)
        let active: LogWriter.ActiveSegment
        if let last = survivors.last, last.start + last.validLength == end {
            let path = inspection.path(last.name)
            active = LogWriter.ActiveSegment(fd: try FileIO.open(path, O_WRONLY), start: last.start, path: path)
        } else {
            active = try LogWriter.createSegmentFile(directory: directory, start: end)
            segments.append(end)
        }
        // What a killed process wrote may still be only in the page cache. Everything recovered
        // counts as durable from now on (a resent event is answered "duplicate" at once), so
        // make it so before serving: sync the active segment's data and the directory.
        do throws(LogError) {
            try FileIO.dataSync(active.fd, path: active.path)
            try FileIO.syncDirectory(directory)
        } catch {
            FileIO.close(active.fd)
            throw error
        }

        report.recordsToReplay = inspection.recordsToReplay
        report.endPosition = LogPosition(offset: end)
        let snapshot = inspection.recoverySnapshot.map {
            (position: LogPosition(offset: $0.position), path: inspection.path($0.name))
        }
        return Recovered(
            report: report,
            snapshot: snapshot,
            replayStart: inspection.replayStart,
            replaySegments: survivors.map {
                ReplaySegment(path: inspection.path($0.name), start: $0.start, length: $0.validLength)
            },
            segments: segments,
            snapshots: inspection.snapshots.filter(\.isValid).map(\.position),
            active: active
        )
    }

    /// Truncates the damaged segment (or deletes it, for a gap) and deletes every later one.
    private static func apply(_ cut: LogInspection.Cut, _ inspection: LogInspection) throws(LogError) {
        for segment in inspection.segments[(cut.segmentIndex + 1)...] {
            try FileIO.unlink(inspection.path(segment.name))
        }
        let segment = inspection.segments[cut.segmentIndex]
        let path = inspection.path(segment.name)
        guard let keep = cut.keepBytes else {
            try FileIO.unlink(path)
            return
        }
        let fd = try FileIO.open(path, O_WRONLY)
        defer { FileIO.close(fd) }
        if keep < RecordFormat.segmentHeaderSize {
            try FileIO.truncate(fd, to: 0, path: path)
            try RecordFormat.segmentHeader(start: segment.start).withBytes { header throws(LogError) in
                try FileIO.pwriteAll(fd, header, at: 0, path: path)
            }
        } else {
            try FileIO.truncate(fd, to: UInt64(keep), path: path)
        }
        try FileIO.dataSync(fd, path: path)
    }
}
