import Glibc
import Histogram

/// The disk's limit: plain `pwrite` + `fdatasync` loops on a file in the same file system as
/// the benchmark's data directories, with nothing else around them.
enum DiskBaseline {
    /// Durable writes per second when each `size`-byte write is followed by `fdatasync`
    /// (appending, as a log does), over about `seconds`.
    /// - Returns: Writes per second, megabytes per second, and the time each write + fdatasync took.
    static func syncLoop(
        directory: String,
        size: Int,
        seconds: Double
    ) throws -> (perSecond: Double, megabytesPerSecond: Double, latency: Histogram<UInt64>) {
        let path = "\(directory)/disk-baseline"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw LoadgenError(.system, "cannot create \(path): errno \(errno)") }
        defer {
            close(fd)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x5A, count: size)
        let start = Monotonic.now()
        let deadline = start + UInt64(seconds * 1e9)
        var count = 0
        var now = start
        var latency = Histogram<UInt64>(
            lowestDiscernibleValue: 1,
            highestTrackableValue: 60_000_000_000,
            numberOfSignificantValueDigits: .three
        )
        repeat {
            let before = now
            let written = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, size, off_t(count * size)) }
            guard written == size, fdatasync(fd) == 0 else {
                throw LoadgenError(.system, "write or fdatasync failed: errno \(errno)")
            }
            count += 1
            now = Monotonic.now()
            _ = latency.record(now - before)
        } while now < deadline
        let elapsed = Monotonic.seconds(from: start, to: now)
        return (Double(count) / elapsed, Double(count * size) / elapsed / 1e6, latency)
    }
}
