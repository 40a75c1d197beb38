package import Foundation

extension Process {
    /// Polls until the process has exited.
    /// - Parameter seconds: How long to wait at most.
    /// - Returns: false if it still runs after `seconds`.
    package func waitForExit(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() >= deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// How the process ended: its exit status, or 128 + the signal number if a signal ended it,
    /// as a shell reports it.
    package var exitStatus: Int32 {
        terminationReason == .exit ? terminationStatus : 128 + terminationStatus
    }
}
