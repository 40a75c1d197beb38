import Glibc

/// The directory changes of a seed around its snapshot file: the `SEEDING` marker that makes
/// an interrupted seed recognisable, and deleting the log's files; and undoing a seed that a
/// crash interrupted.
///
/// ``ReceiptLog/seed(directory:from:beforeCompleting:)`` marks the directory, deletes the old
/// log, renames the incoming snapshot into place, lets the service write its own files, and
/// only then removes the marker, each step synced before the next. A directory is therefore
/// either the old log (a crash before the marker: recovery removes the incoming file, a
/// snapshot temporary), the seeded log (after the marker's removal), or marked, whatever else
/// it holds; opening a marked directory discards every segment and snapshot, so it is an empty
/// log and never a mix of the old one and the new.
enum LogSeeding {
    /// Creates the marker and syncs the directory.
    static func mark(_ directory: String) throws(LogError) {
        let fd = try FileIO.open(directory + "/" + LogFileName.seedingMarker, O_WRONLY | O_CREAT | O_TRUNC)
        FileIO.close(fd)
        try FileIO.syncDirectory(directory)
    }

    /// Deletes every segment, snapshot, snapshot temporary and set-aside snapshot but `kept`,
    /// then syncs the directory.
    ///
    /// - Returns: The names deleted.
    @discardableResult
    static func removeLogFiles(in directory: String, keeping kept: String? = nil) throws(LogError) -> [String] {
        var removed: [String] = []
        for name in try FileIO.list(directory).sorted() where name != kept && Self.isLogFile(name) {
            try FileIO.unlink(directory + "/" + name)
            removed.append(name)
        }
        try FileIO.syncDirectory(directory)
        return removed
    }

    /// Removes the marker and syncs the directory: the seed is complete.
    static func unmark(_ directory: String) throws(LogError) {
        try FileIO.unlink(directory + "/" + LogFileName.seedingMarker)
        try FileIO.syncDirectory(directory)
    }

    /// Discards what an interrupted seed left: every segment and snapshot, then the marker,
    /// each synced, so the directory opens as an empty log.
    ///
    /// - Returns: The names deleted, the marker's aside.
    static func discardInterrupted(_ directory: String) throws(LogError) -> [String] {
        let removed = try Self.removeLogFiles(in: directory)
        try Self.unmark(directory)
        return removed
    }

    /// Whether `name` is one of the log's files that a seed replaces: not the lock, the marker
    /// or anything the service keeps in the directory.
    private static func isLogFile(_ name: String) -> Bool {
        switch LogFileName.parse(name) {
        case .segment, .snapshot, .snapshotTemporary: true
        case .seedingMarker: false
        case nil: LogFileName.isQuarantinedSnapshot(name)
        }
    }
}
