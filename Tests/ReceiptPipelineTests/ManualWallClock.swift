import Synchronization

@testable import ReceiptsService

/// A wall clock the test moves by hand (`ServiceConfiguration.wallClock`): what is "old"
/// depends on the steps the test takes, not on how long the machine took to run them.
final class ManualWallClock: Sendable {
    private let now: Mutex<Int64>

    /// A clock at `milliseconds` since 1970 (by default, a time in November 2023).
    init(startingAt milliseconds: Int64 = 1_700_000_000_000) {
        now = Mutex(milliseconds)
    }

    /// The clock for a worker's configuration.
    var wallClock: WallClock {
        WallClock { [self] in now.withLock { $0 } }
    }

    /// Moves it forward.
    func advance(by duration: Duration) {
        now.withLock { $0 += Int64(duration / .milliseconds(1)) }
    }
}
