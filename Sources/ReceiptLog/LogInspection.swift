/// Everything recovery needs to know about a log directory, found without changing anything.
///
/// Both ``ReceiptLog/init(configuration:logger:onDurable:onFatal:)`` and
/// ``ReceiptLog/verify(directory:)`` build one, so `receiptctl log verify` reports exactly what
/// opening would do.
struct LogInspection {
    struct Segment {
        var name: String
        var start: UInt64
        var fileSize: UInt64
        var scan: SegmentScan
        /// Records before the recovery snapshot's position, when it falls inside this segment.
        var recordsBeforeSnapshot: Int?

        /// Position bytes held by the valid part of the file.
        var validLength: UInt64 {
            UInt64(max(0, self.scan.validEnd - RecordFormat.segmentHeaderSize))
        }
    }

    struct Snapshot {
        var name: String
        var position: UInt64
        var fileSize: UInt64
        /// False once the file failed its check; an older file that recovery had no need to
        /// check stays true.
        var isValid: Bool
    }

    /// Where recovery must cut the log: truncate segment `segmentIndex` to `keepBytes` of file
    /// (nil: delete the file, for a gap) and delete every later segment.
    struct Cut {
        var segmentIndex: Int
        var keepBytes: Int?
    }

    var directory: String
    var segments: [Segment] = []
    /// Snapshot files, oldest first.
    var snapshots: [Snapshot] = []
    /// The newest valid snapshot, where recovery starts.
    var recoverySnapshot: Snapshot?
    var temporaryFiles: [String] = []
    /// Whether the directory holds the ``LogFileName/seedingMarker`` of a seed a crash
    /// interrupted: opening discards every segment and snapshot and starts an empty log.
    var interruptedSeed = false
    /// The first problem in log order.
    var damage: LogDamage?
    var cut: Cut?

    /// The position replay starts from.
    var replayStart: UInt64 {
        self.recoverySnapshot?.position ?? 0
    }

    /// Reads every segment and snapshot in `directory` and checks them.
    ///
    /// - Parameters:
    ///   - directory: The log directory.
    ///   - checkingEverySnapshot: Check every snapshot file (`verify`). Otherwise (opening)
    ///     only the newest is checked, and an older one only when every newer one failed:
    ///     each check reads the whole file, and only the snapshot recovery starts from is used.
    init(directory: String, checkingEverySnapshot: Bool) throws(LogError) {
        self.directory = directory
        var segmentStarts: [(name: String, start: UInt64)] = []
        for name in try FileIO.list(directory) {
            switch LogFileName.parse(name) {
            case .segment(let start): segmentStarts.append((name, start))
            case .snapshot(let position):
                self.snapshots.append(Snapshot(name: name, position: position, fileSize: 0, isValid: true))
            case .snapshotTemporary: self.temporaryFiles.append(name)
            case .seedingMarker: self.interruptedSeed = true
            case nil: break
            }
        }
        self.snapshots.sort { $0.position < $1.position }
        segmentStarts.sort { $0.start < $1.start }
        self.temporaryFiles.sort()

        for index in self.snapshots.indices.reversed() {
            let snapshot = self.snapshots[index]
            let path = self.path(snapshot.name)
            guard checkingEverySnapshot || self.recoverySnapshot == nil else {
                self.snapshots[index].fileSize = try FileIO.size(ofFile: path)
                continue
            }
            let (size, isValid) = try FileIO.withMappedFile(path) { bytes in
                (UInt64(bytes.count), SnapshotFile.payload(in: bytes, position: snapshot.position) != nil)
            }
            self.snapshots[index].fileSize = size
            self.snapshots[index].isValid = isValid
            if isValid && self.recoverySnapshot == nil { self.recoverySnapshot = self.snapshots[index] }
        }

        let start = self.replayStart
        for (name, segmentStart) in segmentStarts {
            self.segments.append(
                try FileIO.withMappedFile(self.path(name)) { bytes in
                    let scan = SegmentScan(bytes, start: segmentStart)
                    var segment = Segment(name: name, start: segmentStart, fileSize: UInt64(bytes.count), scan: scan)
                    if segmentStart < start && start <= segmentStart + segment.validLength {
                        let target = Int(start - segmentStart) + RecordFormat.segmentHeaderSize
                        segment.recordsBeforeSnapshot = SegmentScan.recordsBefore(bytes, target: target)
                    }
                    return segment
                }
            )
        }
        self.findFirstProblem()
    }

    /// Why opening the log must refuse to start: a snapshot off a record boundary, or damage
    /// other than a torn tail, unless the operator asked to cut the log there; nil when it may
    /// open (truncating a torn tail on the way).
    func refusal(cuttingCorruption: Bool) -> LogError? {
        guard let damage = self.damage else { return nil }
        if damage.kind == .snapshotNotOnRecordBoundary {
            return LogError(
                code: .invalidSnapshot,
                message: "snapshot position \(self.replayStart) is not a record boundary",
                file: self.path(damage.file),
                offset: damage.offset
            )
        }
        guard !damage.isTruncatableTail && !cuttingCorruption else { return nil }
        return LogError(
            code: damage.kind == .gap ? .gap : .corruption,
            message: "\(damage); refusing to start (the operator may cut the log there explicitly)",
            file: self.path(damage.file),
            offset: damage.offset
        )
    }

    func path(_ name: String) -> String {
        self.directory + "/" + name
    }

    /// Walks segments in log order and records the first gap or damage and where to cut.
    private mutating func findFirstProblem() {
        let start = self.replayStart
        for index in self.segments.indices {
            let segment = self.segments[index]
            let expected = index == 0 ? start : self.segments[index - 1].start + self.segments[index - 1].validLength
            if segment.start > start && segment.start != expected {
                self.damage = LogDamage(
                    file: segment.name,
                    offset: 0,
                    kind: .gap,
                    isTruncatableTail: false,
                    droppedBytes: self.bytes(from: index),
                    droppedRecords: self.records(from: index)
                )
                self.cut = Cut(segmentIndex: index, keepBytes: nil)
                return
            }
            if segment.start < start && start < segment.start + segment.validLength
                && segment.recordsBeforeSnapshot == nil
            {
                self.damage = LogDamage(
                    file: segment.name,
                    offset: start - segment.start + UInt64(RecordFormat.segmentHeaderSize),
                    kind: .snapshotNotOnRecordBoundary,
                    isTruncatableTail: false,
                    droppedBytes: 0,
                    droppedRecords: 0
                )
                return
            }
            if let damage = segment.scan.damage {
                let isLast = index == self.segments.count - 1
                self.damage = LogDamage(
                    file: segment.name,
                    offset: UInt64(damage.offset),
                    kind: damage.kind,
                    isTruncatableTail: isLast && !damage.followedByValidRecord,
                    droppedBytes: segment.fileSize - UInt64(segment.scan.validEnd) + self.bytes(from: index + 1),
                    droppedRecords: damage.droppedRecords + self.records(from: index + 1)
                )
                self.cut = Cut(segmentIndex: index, keepBytes: segment.scan.validEnd)
                return
            }
        }
    }

    private func bytes(from index: Int) -> UInt64 {
        self.segments[index...].reduce(0) { $0 + $1.fileSize }
    }

    private func records(from index: Int) -> Int {
        self.segments[index...].reduce(0) { $0 + $1.scan.records + ($1.scan.damage?.droppedRecords ?? 0) }
    }

    /// The segments that remain once the cut (if any) is applied, with their valid lengths.
    var survivingSegments: [Segment] {
        guard let cut = self.cut else { return self.segments }
        return Array(self.segments[..<(cut.keepBytes == nil ? cut.segmentIndex : cut.segmentIndex + 1)])
    }

    /// Records replay will deliver once the cut is applied.
    var recordsToReplay: Int {
        let start = self.replayStart
        return self.survivingSegments.reduce(0) { total, segment in
            if segment.start >= start { return total + segment.scan.records }
            if let before = segment.recordsBeforeSnapshot { return total + segment.scan.records - before }
            return total
        }
    }

    /// Where the recovered log ends: the end of the last surviving segment, or the snapshot's
    /// position when that is further (the snapshot holds everything up to it).
    var endPosition: UInt64 {
        let logEnd = self.survivingSegments.last.map { $0.start + $0.validLength } ?? 0
        return max(logEnd, self.replayStart)
    }
}
