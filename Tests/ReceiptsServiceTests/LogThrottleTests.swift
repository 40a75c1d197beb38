import Testing

@testable import ReceiptsService

/// One log line per kind per interval, the rest counted for the next line.
@Suite struct LogThrottleTests {
    @Test func oneLinePerKindPerIntervalAndTheRestCounted() {
        var throttle = LogThrottle<String>(intervalMilliseconds: 1000)
        #expect(throttle.admit("a", now: 0) == 0)
        #expect(throttle.admit("a", now: 10) == nil)
        #expect(throttle.admit("a", now: 999) == nil)
        #expect(throttle.admit("b", now: 999) == 0, "another kind has its own interval")
        #expect(throttle.admit("a", now: 1000) == 2, "the line says how many were not logged")
        #expect(throttle.admit("a", now: 1500) == nil)
    }

    @Test func inventedKindsDoNotGrowItWithoutBound() {
        var throttle = LogThrottle<Int>(intervalMilliseconds: 1000, kindLimit: 3)
        for kind in 0..<3 { #expect(throttle.admit(kind, now: 0) == 0) }
        #expect(throttle.admit(3, now: 0) == 0, "the memory is cleared for a fourth kind")
        #expect(throttle.admit(0, now: 1) == 0, "so an earlier kind is logged again")
    }
}
