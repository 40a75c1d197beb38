import Glibc

/// Thin wrappers over the POSIX calls the log needs: EINTR retried, partial writes looped,
/// failures turned into ``LogError`` with the path attached.
enum FileIO {
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(LogError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw failure("open", path: path)
        }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Writes all of `bytes` at `offset`, looping on partial writes and EINTR.
    static func pwriteAll(
        _ fd: Int32,
        _ bytes: UnsafeRawBufferPointer,
        at offset: UInt64,
        path: String
    ) throws(LogError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                // n == 0 would loop forever; treat it like the ENOSPC it almost always is.
                let code = n == 0 ? ENOSPC : errno
                throw LogError(
                    code: .io,
                    message: "write failed",
                    cause: SystemCallError(call: "pwrite", errno: code),
                    file: path,
                    offset: offset + UInt64(done)
                )
            }
        }
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends, retrying EINTR.
    ///
    /// - Returns: The bytes read: fewer than `buffer.count` only at the end of the file.
    static func preadAll(
        _ fd: Int32,
        into buffer: UnsafeMutableRawBufferPointer,
        at offset: UInt64,
        path: String
    ) throws(LogError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw LogError(
                    code: .io,
                    message: "read failed",
                    cause: SystemCallError(call: "pread", errno: errno),
                    file: path,
                    offset: offset + UInt64(done)
                )
            }
        }
        return done
    }

    /// `fdatasync`, reported as ``LogError/Code/fsyncFailed``: the caller must treat it as fatal.
    static func dataSync(_ fd: Int32, path: String) throws(LogError) {
        while fdatasync(fd) != 0 {
            if errno == EINTR { continue }
            throw LogError(
                code: .fsyncFailed,
                message: "fdatasync failed",
                cause: SystemCallError(call: "fdatasync", errno: errno),
                file: path
            )
        }
    }

    /// Syncs a directory so that created, renamed and deleted entries survive a power cut.
    static func syncDirectory(_ path: String) throws(LogError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw LogError(
                code: .fsyncFailed,
                message: "fsync of directory failed",
                cause: SystemCallError(call: "fsync", errno: errno),
                file: path
            )
        }
    }

    static func truncate(_ fd: Int32, to length: UInt64, path: String) throws(LogError) {
        while ftruncate(fd, off_t(length)) != 0 {
            if errno == EINTR { continue }
            throw failure("ftruncate", path: path)
        }
    }

    static func size(_ fd: Int32, path: String) throws(LogError) -> UInt64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("fstat", path: path) }
        return UInt64(info.st_size)
    }

    static func size(ofFile path: String) throws(LogError) -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw failure("stat", path: path) }
        return UInt64(info.st_size)
    }

    static func rename(_ from: String, to: String) throws(LogError) {
        guard Glibc.rename(from, to) == 0 else { throw failure("rename", path: from) }
    }

    static func unlink(_ path: String) throws(LogError) {
        guard Glibc.unlink(path) == 0 else { throw failure("unlink", path: path) }
    }

    /// Creates `path` and any missing parents.
    static func makeDirectories(_ path: String) throws(LogError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw failure("mkdir", path: prefix)
            }
            prefix += "/"
        }
    }

    /// The names in a directory, without `.` and `..`.
    static func list(_ path: String) throws(LogError) -> [String] {
        guard let dir = opendir(path) else { throw failure("opendir", path: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Maps a whole file read-only and hands its bytes to `body`; an empty file gives an empty
    /// buffer. The mapping is gone when `body` returns.
    static func withMappedFile<R>(
        _ path: String,
        _ body: (UnsafeRawBufferPointer) throws(LogError) -> R
    ) throws(LogError) -> R {
        let file = try MappedFile(path: path)
        return try body(file.bytes)
    }

    static func failure(_ call: String, path: String) -> LogError {
        LogError(code: .io, message: "\(call) failed", cause: SystemCallError(call: call, errno: errno), file: path)
    }
}
