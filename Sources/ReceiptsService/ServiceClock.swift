import ReceiptsCore

#if canImport(Glibc)
import Glibc
#endif

/// Where a worker reads wall time (milliseconds since 1970): the system's clock, or one a test
/// moves by hand (`ServiceConfiguration.wallClock`), so that retention and receipt times can be
/// tested without sleeping.
struct WallClock: Sendable {
    /// Reads it.
    let milliseconds: @Sendable () -> Int64

    /// The system's `CLOCK_REALTIME`.
    static let system = WallClock { ServiceClock.milliseconds(CLOCK_REALTIME) }
}

/// The loop's clocks: wall time for the engine (never going backwards, so sent times and
/// receipts stay ordered even if the wall clock steps back) and monotonic time for timers.
struct ServiceClock {
    private let wall: WallClock
    private var last = Timestamp(milliseconds: 0)

    /// A clock on `wall` that has handed out no time yet.
    init(wall: WallClock) {
        self.wall = wall
    }

    /// Server time for the next applied batch: the wall clock, but never earlier than before.
    mutating func now() -> Timestamp {
        let wall = Timestamp(milliseconds: wall.milliseconds())
        if wall > last { last = wall }
        return last
    }

    /// Raises the floor to a time already used (after replaying the log).
    mutating func advance(to time: Timestamp) {
        if time > last { last = time }
    }

    /// Milliseconds on the monotonic clock, for deadlines and uptime.
    static func monotonicMilliseconds() -> Int64 {
        milliseconds(CLOCK_MONOTONIC)
    }

    /// Nanoseconds on the monotonic clock, for latencies.
    static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// `end - start` of two monotonic readings, or 0 should `end` be a hair earlier (read on
    /// another thread).
    static func nanoseconds(from start: UInt64, to end: UInt64) -> UInt64 {
        end > start ? end - start : 0
    }

    fileprivate static func milliseconds(_ clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
