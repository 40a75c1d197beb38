import CZlib
import Glibc

extension RecordFormat {
    /// zlib's crc32 of a large buffer, its first half on a second thread (`crc32_combine` joins
    /// the halves): checking a 50 MB snapshot at open takes about half as long when the second
    /// core is free, and opening has nothing else to do meanwhile.
    ///
    /// Buffers under 2 MiB, or when no thread can be started, are checked on this thread.
    static func crc32OnTwoThreads(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        let half = bytes.count / 2
        guard half >= 1 << 20 else { return crc32(bytes) }
        let first = HalfChecksum(UnsafeRawBufferPointer(rebasing: bytes[..<half]))
        guard case .success(let thread) = ThreadBody(name: "log-crc32", { first.run() }).start() else {
            return crc32(bytes)
        }
        let second = crc32(UnsafeRawBufferPointer(rebasing: bytes[half...]))
        pthread_join(thread, nil)
        return UInt32(truncatingIfNeeded: crc32_combine(UInt(first.crc), UInt(second), .init(bytes.count - half)))
    }

    /// The crc32 of one half, computed on the helper thread and read after joining it.
    private final class HalfChecksum {
        let bytes: UnsafeRawBufferPointer
        var crc: UInt32 = 0

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        func run() {
            self.crc = RecordFormat.crc32(self.bytes)
        }
    }
}
