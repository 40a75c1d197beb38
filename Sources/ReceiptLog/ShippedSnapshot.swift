import Glibc

/// A primary's newest snapshot file, open for shipping to a standby, with a pin that keeps the
/// segments from its position on.
///
/// Opened with ``ReceiptLog/openNewestSnapshot()``. The shipper sends the file as it is on disk
/// (``read(at:into:)`` in chunks), then records from ``position`` on; it keeps ``pin`` (and
/// moves it forward as the standby confirms) so that compaction cannot delete those records
/// meanwhile. Reads go through a descriptor opened before the first byte is sent, so a
/// compaction that unlinks the file cannot take the bytes away. Not `Sendable`: one thread
/// ships a snapshot.
public final class ShippedSnapshot {
    /// The position the snapshot covers the log up to: where the records after it start.
    public let position: LogPosition
    /// The size of the whole file, header included.
    public let fileBytes: UInt64
    /// Holds the log at ``position``; ``close()`` leaves it to the shipper, which moves it or
    /// lets it go (the last reference releases it).
    public let pin: LogPin
    private let path: String
    /// The file's descriptor; nil once closed.
    private var fd: Int32?

    /// Opens the snapshot file at `path`, which the log lists at `position` and `pin` holds.
    ///
    /// - Throws: ``LogError`` `.io` when it cannot be opened (with `ENOENT` as the cause when a
    ///   compaction unlinked it since it was chosen).
    init(path: String, position: LogPosition, pin: LogPin) throws(LogError) {
        let fd = try FileIO.open(path, O_RDONLY)
        do throws(LogError) {
            self.fileBytes = try FileIO.size(fd, path: path)
        } catch {
            FileIO.close(fd)
            throw error
        }
        self.fd = fd
        self.path = path
        self.position = position
        self.pin = pin
    }

    deinit {
        self.close()
    }

    /// Reads the file's bytes from `offset` into `buffer`, as many as fit and the file has.
    ///
    /// - Parameters:
    ///   - offset: Where to read in the file.
    ///   - buffer: Where the bytes go.
    /// - Returns: The number of bytes read: fewer than `buffer.count` only at the end of the
    ///   file, 0 at or past it.
    /// - Throws: ``LogError`` `.closed` after ``close()``, `.io` when the read fails.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(LogError) -> Int {
        guard let fd = self.fd else {
            throw LogError(code: .closed, message: "the shipped snapshot is closed", file: self.path)
        }
        guard offset < self.fileBytes else { return 0 }
        let count = Int(min(UInt64(buffer.count), self.fileBytes - offset))
        return try FileIO.preadAll(
            fd,
            into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]),
            at: offset,
            path: self.path
        )
    }

    /// Closes the file; calling it again does nothing. The ``pin`` stays as it is.
    public func close() {
        if let fd = self.fd { FileIO.close(fd) }
        self.fd = nil
    }
}
