import Histogram

/// What one drive of a workload measured.
struct DriveResult: Sendable {
    /// Events in the measured frames.
    var events: Int
    /// From the first send to the last acknowledgement (or, fire-and-forget, to the moment
    /// everything sent was applied and a marker batch behind it was acknowledged durable).
    var seconds: Double
    /// Acknowledged: monotonic times of the first send and the last acknowledgement (to combine
    /// drives that ran side by side).
    var startedAt: UInt64 = 0
    var finishedAt: UInt64 = 0
    var accepted = 0
    var duplicates = 0
    var rejected = 0
    /// Fire-and-forget: events the worker never saw (dropped at a high-water mark).
    var lost = 0
    /// The subscriber's view, when latency was tracked.
    var updates: UpdateCollector.Report?
    /// Acknowledged, when latency was tracked: from each frame's send (or due time, at a fixed
    /// rate) to its reply at the gateway, in nanoseconds.
    var acknowledgementLatency: Histogram<UInt64>?
    /// Through ReceiptsClient: the frames it made of the measured events, and how many of
    /// them it sent again (acknowledgement timeout or UNAVAILABLE).
    var clientFrames: Int?
    var clientFramesResent = 0
    /// Through ReceiptsClient: CPU seconds the load generator spent while timed (the client's
    /// thread and the calling tasks).
    var clientCPUSeconds = 0.0
    /// CPU seconds receiptd spent while driven (every thread), when the bench measured it.
    var daemonCPUSeconds = 0.0
    /// Of which the `receiptd-worker` thread's (0 for a build whose thread has another name).
    var workerCPUSeconds = 0.0

    var eventsPerSecond: Double { Double(events - lost) / seconds }

    /// Latency at a percentile in microseconds, if tracked.
    func latencyMicroseconds(_ percentile: Double) -> Double? {
        updates?.latency.microseconds(atPercentile: percentile)
    }

    /// The gateway's acknowledgement latency at a percentile in microseconds, if tracked.
    func acknowledgementMicroseconds(_ percentile: Double) -> Double? {
        acknowledgementLatency?.microseconds(atPercentile: percentile)
    }

    /// A few lines for `run`.
    var summary: String {
        var lines = [
            String(format: "events %d in %.3f s: %.0f events/s", events, seconds, eventsPerSecond),
            "outcomes: accepted \(accepted), duplicate \(duplicates), rejected \(rejected), lost \(lost)",
        ]
        if let clientFrames {
            lines.append(
                String(
                    format: "client: %d frames (%.1f events/frame), %d re-sent, %.2f s CPU (%.1f µs/event)",
                    clientFrames,
                    Double(events) / Double(max(clientFrames, 1)),
                    clientFramesResent,
                    clientCPUSeconds,
                    clientCPUSeconds * 1e6 / Double(max(events, 1))
                )
            )
        }
        if let line = acknowledgementLatency?.percentileLine {
            lines.append("frame → acknowledgement at the gateway: " + line)
        }
        if let updates {
            lines.append(
                "updates: \(updates.updates) received, \(updates.matched) matched to their event, "
                    + "\(updates.unmatched) unmatched, \(updates.gaps) missing by sequence"
            )
            if let line = updates.latency.percentileLine {
                lines.append("event → status latency: " + line)
            }
        }
        return lines.joined(separator: "\n")
    }
}
