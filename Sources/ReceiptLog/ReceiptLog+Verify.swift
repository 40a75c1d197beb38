extension ReceiptLog {
    /// Checks a log directory the way opening it would, and changes nothing.
    ///
    /// Backs `receiptctl log verify`: it reads every snapshot and segment, and reports the
    /// first damage with its file and byte offset, and whether opening would truncate it as a
    /// torn tail or refuse to start. (Opening checks only the snapshot it starts from, and an
    /// older one only when a newer one fails.) Safe to run while the service has the log open (it takes
    /// no lock; a group being written at that moment may show as a torn tail).
    ///
    /// - Parameter directory: The log directory.
    /// - Returns: Counts, snapshots, and the first problem.
    /// - Throws: ``LogError`` `.io` when the directory or a file cannot be read.
    public static func verify(directory: String) throws(LogError) -> VerifyReport {
        let inspection = try LogInspection(directory: directory, checkingEverySnapshot: true)
        return VerifyReport(
            segments: inspection.segments.count,
            records: inspection.segments.reduce(0) { $0 + $1.scan.records },
            bytes: inspection.segments.reduce(0) { $0 + $1.fileSize },
            snapshots: inspection.snapshots.map {
                VerifyReport.Snapshot(
                    file: $0.name,
                    position: LogPosition(offset: $0.position),
                    bytes: $0.fileSize,
                    isValid: $0.isValid
                )
            },
            recoverySnapshot: inspection.recoverySnapshot.map { LogPosition(offset: $0.position) },
            recordsToReplay: inspection.recordsToReplay,
            endPosition: LogPosition(offset: inspection.endPosition),
            problem: inspection.damage,
            temporaryFiles: inspection.temporaryFiles,
            interruptedSeed: inspection.interruptedSeed
        )
    }
}
