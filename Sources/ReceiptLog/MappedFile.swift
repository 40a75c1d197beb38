import Glibc

/// A whole file mapped read-only; unmapped when the value goes away.
///
/// Replay and recovery read segments through a mapping so that records are handed out as
/// pointers into the page cache, with no copy and no allocation per record.
struct MappedFile: ~Copyable {
    private let base: UnsafeMutableRawPointer?
    /// The file's bytes (empty for an empty file).
    let bytes: UnsafeRawBufferPointer

    init(path: String) throws(LogError) {
        let fd = try FileIO.open(path, O_RDONLY)
        defer { FileIO.close(fd) }
        let length = Int(try FileIO.size(fd, path: path))
        guard length > 0 else {
            self.base = nil
            self.bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let base = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw FileIO.failure("mmap", path: path)
        }
        _ = madvise(base, length, MADV_SEQUENTIAL)
        self.base = base
        self.bytes = UnsafeRawBufferPointer(start: base, count: length)
    }

    deinit {
        if let base { munmap(base, self.bytes.count) }
    }
}
