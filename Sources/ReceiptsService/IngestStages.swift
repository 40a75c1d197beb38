import ReceiptLog
import Synchronization

/// The stages an acknowledged ingest frame goes through, timed for one frame in
/// ``IngestStageTrace/sampleEvery`` (`receiptd_ingest_stage_seconds{stage}`), so that an operator
/// (and the bench) sees where a frame's acknowledgement latency goes, as Kafka's request metrics
/// split a request's time into its queue, local, remote and response times.
enum IngestStage: String, CaseIterable, Sendable {
    /// Received → decoded and applied to the engine.
    case apply
    /// Applied → appended to the log's pending group.
    case append
    /// Appended → the log's writer thread took the group that holds it.
    case commitWait = "commit_wait"
    /// The group's `pwrite`.
    case write
    /// The `fdatasync` that made it durable.
    case fdatasync
    /// Synced → the pipeline completed it: its wake-up and completion interval, and under
    /// `--replication-ack standby` the standbys' acknowledgement.
    case completion
    /// Completion → its updates handed to the publishing thread and its reply sent.
    case reply
    /// Handed to the publishing thread → sent on the PUB socket: the oldest update of each batch
    /// the thread takes (every batch, not a sample; read states included).
    case publish
}

/// When one sampled acknowledged ingest frame passed the pipeline's own stages (monotonic
/// nanoseconds); the log's stages come from the ``CommitTimeline``.
struct IngestStageTrace {
    /// One acknowledged frame in this many is traced: a trace costs a few clock reads, a lock
    /// and seven histogram records.
    static let sampleEvery: UInt64 = 16

    var received: UInt64
    var applied: UInt64 = 0
    var appended: UInt64 = 0

    /// The stages of the frame whose record ends at `position`, completed at `completed` and
    /// answered at `replied`, in the order of ``IngestStage``; nil when `timeline` no longer
    /// holds the group commits that wrote and synced it.
    func stages(
        position: LogPosition,
        completed: UInt64,
        replied: UInt64,
        timeline: CommitTimeline
    ) -> [(IngestStage, UInt64)]? {
        guard let (written, synced) = timeline.commits(covering: position) else { return nil }
        let syncNanoseconds = synced.map { Self.nanoseconds($0.syncDuration ?? .zero) } ?? 0
        let writeEnd =
            written.syncDuration.map { written.finishedNanoseconds &- Self.nanoseconds($0) }
            ?? written.finishedNanoseconds
        let durable = synced?.finishedNanoseconds ?? written.finishedNanoseconds
        var stages: [(IngestStage, UInt64)] = [
            (.apply, Self.elapsed(received, applied)),
            (.append, Self.elapsed(applied, appended)),
            (.commitWait, Self.elapsed(appended, written.startedNanoseconds)),
            (.write, Self.elapsed(written.startedNanoseconds, writeEnd)),
        ]
        if synced != nil { stages.append((.fdatasync, syncNanoseconds)) }
        stages.append((.completion, Self.elapsed(durable, completed)))
        stages.append((.reply, Self.elapsed(completed, replied)))
        return stages
    }

    /// `end - start`, or 0 should another thread's clock read land a hair earlier.
    private static func elapsed(_ start: UInt64, _ end: UInt64) -> UInt64 {
        end > start ? end - start : 0
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}

/// The log writer's last group commits (reported on its thread), for the pipeline to find the
/// ones that wrote and synced a traced frame.
final class CommitTimeline: Sendable {
    /// Commits kept: at a group commit per fdatasync, far more than one completion pass spans.
    static let capacity = 256

    private struct Ring {
        var commits: [GroupCommit] = []
        var next = 0
        /// The end of the newest commit no longer kept: a position up to it may have been
        /// written by a commit the ring lost.
        var forgottenEnd = LogPosition.zero
    }

    private let ring = Mutex(Ring())

    /// Keeps `commit` (on the log's writer thread), forgetting the oldest past ``capacity``.
    func record(_ commit: GroupCommit) {
        ring.withLock { ring in
            if ring.commits.count < Self.capacity {
                ring.commits.append(commit)
            } else {
                ring.forgottenEnd = ring.commits[ring.next].end
                ring.commits[ring.next] = commit
                ring.next = (ring.next + 1) % Self.capacity
            }
        }
    }

    /// The first kept commit that wrote up to `position` or past it, and the first that synced
    /// up to it or past it (nil under a policy that has not synced it); nil when the commit that
    /// wrote it is no longer kept or not yet reported.
    func commits(covering position: LogPosition) -> (written: GroupCommit, synced: GroupCommit?)? {
        ring.withLock { ring in
            guard position > ring.forgottenEnd else { return nil }
            var written: GroupCommit?
            for index in 0..<ring.commits.count {
                let commit = ring.commits[(ring.next + index) % ring.commits.count]
                guard commit.end >= position else { continue }
                if written == nil { written = commit }
                if commit.syncDuration != nil { return (written ?? commit, commit) }
            }
            return written.map { ($0, nil) }
        }
    }
}
