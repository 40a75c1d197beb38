/// The snapshot recovery starts from, as a read-only mapping of its (already checked) file;
/// unmapped when the last reference goes.
///
/// Restoring reads the payload in place: no copy into the heap, and no second pass over the
/// bytes to check them. Sendable because nothing in it ever changes: the mapping is read-only
/// and lives as long as the object.
final class MappedSnapshot: @unchecked Sendable {
    let position: LogPosition
    private let file: MappedFile

    /// Maps the file at `path`, which recovery has checked.
    ///
    /// - Throws: ``LogError`` `.io` if it cannot be mapped, `.invalidSnapshot` if its header
    ///   no longer matches (the file was replaced after the check).
    init(path: String, position: LogPosition) throws(LogError) {
        self.file = try MappedFile(path: path)
        self.position = position
        guard SnapshotFile.payload(in: self.file.bytes, position: position.offset, checkingPayload: false) != nil else {
            throw LogError(code: .invalidSnapshot, message: "snapshot changed after recovery checked it", file: path)
        }
    }

    /// The payload, valid while this value lives.
    var payload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self.file.bytes[SnapshotFile.headerSize...])
    }
}
