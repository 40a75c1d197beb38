import Glibc

/// A snapshot file arriving from a primary, written in order into the log directory of the
/// standby that will seed from it with ``ReceiptLog/seed(directory:from:beforeCompleting:)``.
///
/// The file is a snapshot temporary by name, so a crash that leaves it behind costs nothing:
/// opening the log removes it, as it removes an interrupted snapshot of its own. Nothing is
/// checked while it arrives; the seed checks the whole file (header, position, crc32) before
/// it changes anything. Not `Sendable`: one thread receives a snapshot.
public final class IncomingSnapshot {
    /// Whether the file is still arriving (and through which descriptor), or what ended it.
    private enum State {
        case receiving(fd: Int32)
        /// Renamed into place by a seed.
        case seeded
        case discarded
    }

    /// The log directory the file is written into.
    public let directory: String
    /// The position the snapshot covers the log up to, as the primary sent it.
    public let position: LogPosition
    /// The size of the whole file, as the primary sent it.
    public let fileBytes: UInt64
    /// The bytes written so far: the offset the next ``write(_:at:)`` must name.
    public private(set) var bytesWritten: UInt64 = 0
    /// The file's name in ``directory``.
    let name: String
    private var state: State

    /// Creates (or truncates) the file a snapshot at `position` arrives into, creating the
    /// directory if missing (a new member's).
    ///
    /// - Parameters:
    ///   - directory: The log directory, which must not be open as a log when it is seeded.
    ///   - position: The snapshot's position.
    ///   - fileBytes: The size of the snapshot file, at least a snapshot header.
    /// - Throws: ``LogError`` `.invalidArgument` when `fileBytes` is less than a snapshot
    ///   header, `.io` when the directory or the file cannot be created.
    public init(directory: String, position: LogPosition, fileBytes: UInt64) throws(LogError) {
        guard fileBytes >= UInt64(SnapshotFile.headerSize) else {
            throw LogError(
                code: .invalidArgument,
                message:
                    "a snapshot file of \(fileBytes) bytes is shorter than its \(SnapshotFile.headerSize)-byte header"
            )
        }
        self.directory = directory
        self.position = position
        self.fileBytes = fileBytes
        self.name = LogFileName.incoming(snapshotAt: position.offset)
        try FileIO.makeDirectories(directory)
        self.state = .receiving(fd: try FileIO.open(directory + "/" + self.name, O_WRONLY | O_CREAT | O_TRUNC))
    }

    deinit {
        if case .receiving(let fd) = self.state { FileIO.close(fd) }
    }

    /// The file's path.
    var path: String {
        self.directory + "/" + self.name
    }

    /// Whether all ``fileBytes`` bytes have been written.
    public var isComplete: Bool {
        self.bytesWritten == self.fileBytes
    }

    /// Writes the next bytes of the file.
    ///
    /// - Parameters:
    ///   - bytes: The bytes, at most what remains of ``fileBytes``.
    ///   - offset: Their offset in the file: ``bytesWritten``, as chunks arrive in order.
    /// - Throws: ``LogError`` `.invalidArgument` for another offset or bytes past ``fileBytes``
    ///   (nothing is written), `.closed` after ``discard()`` or a seed, `.io` when the write
    ///   fails (the same chunk may be written again).
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(LogError) {
        let fd = try self.descriptor()
        guard offset == self.bytesWritten else {
            throw LogError(
                code: .invalidArgument,
                message: "a snapshot chunk at offset \(offset), where \(self.bytesWritten) was expected",
                file: self.path
            )
        }
        guard UInt64(bytes.count) <= self.fileBytes - offset else {
            throw LogError(
                code: .invalidArgument,
                message: "a snapshot chunk of \(bytes.count) bytes at \(offset) runs past the file's \(self.fileBytes)",
                file: self.path
            )
        }
        try FileIO.pwriteAll(fd, bytes, at: offset, path: self.path)
        self.bytesWritten += UInt64(bytes.count)
    }

    /// Closes and deletes the file: the transfer is abandoned. Calling it again, or after a
    /// seed used the file, does nothing.
    public func discard() {
        guard case .receiving(let fd) = self.state else { return }
        FileIO.close(fd)
        _ = unlink(self.path)
        self.state = .discarded
    }

    /// Checks that the file is whole and a valid snapshot for ``position``, then syncs it: the
    /// first step of a seed, which changes nothing when this throws.
    ///
    /// - Throws: ``LogError`` `.invalidSnapshot` for an incomplete or invalid file, `.closed`
    ///   after ``discard()`` or a seed, `.io` or `.fsyncFailed`.
    func checkAndSync() throws(LogError) {
        let fd = try self.descriptor()
        guard self.isComplete else {
            throw LogError(
                code: .invalidSnapshot,
                message: "the incoming snapshot has \(self.bytesWritten) of its \(self.fileBytes) bytes",
                file: self.path
            )
        }
        let isValid = try FileIO.withMappedFile(self.path) { bytes in
            UInt64(bytes.count) == self.fileBytes
                && SnapshotFile.payload(in: bytes, position: self.position.offset) != nil
        }
        guard isValid else {
            throw LogError(
                code: .invalidSnapshot,
                message: "the incoming snapshot is not a valid snapshot at \(self.position.offset)",
                file: self.path
            )
        }
        try FileIO.dataSync(fd, path: self.path)
    }

    /// Records that a seed renamed the file into place, and closes it.
    func seeded() {
        if case .receiving(let fd) = self.state { FileIO.close(fd) }
        self.state = .seeded
    }

    private func descriptor() throws(LogError) -> Int32 {
        guard case .receiving(let fd) = self.state else {
            throw LogError(code: .closed, message: "the incoming snapshot was discarded or seeded", file: self.path)
        }
        return fd
    }
}
