import Glibc

/// The lease deadline rule of deploy/REPLICATION.md, section 7.3, shared by every `Coordinator`.
///
/// The service counts a lease's TTL from when it *received* a renewal, on its own clock; the
/// member knows only when it *sent* it. So the member's deadline starts from the send time and
/// gives up a margin, `max(0.5 s, TTL / 6)`, for the two clocks running at different rates: the
/// deadline comes before the service's expiry unless the member's clock runs more than 15% fast.
package enum LeaseDeadline {
    /// The margin for a lease of `ttlSeconds`, in nanoseconds.
    package static func marginNanoseconds(ttlSeconds: Int64) -> UInt64 {
        max(500_000_000, UInt64(max(ttlSeconds, 0)) * 1_000_000_000 / 6)
    }

    /// Until when a lease renewed by a request sent at `sentAt` (monotonic nanoseconds) with the
    /// answer `ttlSeconds` is certainly alive; `sentAt` itself when the margin eats the whole TTL.
    package static func after(sentAt: UInt64, ttlSeconds: Int64) -> UInt64 {
        let ttl = UInt64(max(ttlSeconds, 0)) * 1_000_000_000
        let margin = marginNanoseconds(ttlSeconds: ttlSeconds)
        return ttl > margin ? sentAt + ttl - margin : sentAt
    }

    /// Now on `CLOCK_MONOTONIC`, the clock `Coordinator.leaseDeadline` is on.
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
