import ReceiptLog

/// The stages an acknowledged ingest frame goes through, timed for one frame in
/// ``IngestStageTrace/sampleEvery`` (`receiptd_ingest_stage_seconds{stage}`), so that an operator
/// (and the bench) sees where a frame's acknowledgement latency goes, as Kafka's request metrics
/// split a request's time into its queue, local, remote and response times.
package enum IngestStage: String, CaseIterable, Sendable {
    /// Received → decoded and applied to the engine.
    case apply
    /// Applied → appended to the log's pending group.
    case append
    /// Appended → the log's writer thread took the group that holds it.
    case commitWait = "commit_wait"
    /// The group's `pwrite`.
    case write
    /// The group's `fdatasync` (under `--fsync always`; under another policy a frame is durable
    /// once written, and this stage is timed only when the write step synced).
    case fdatasync
    /// Durable → the pipeline completed it: its wake-up and completion interval, and under
    /// `--replication-ack standby` the standbys' acknowledgement.
    case completion
    /// Completion → its updates handed to the publishing thread and its reply sent, behind the
    /// frames ahead of it in the same pass.
    case reply
    /// Handed to the publishing thread → sent on the PUB socket: the oldest update of each batch
    /// the thread takes (every batch, not a sample; read states included).
    case publish

    /// The stages timed for each traced frame: all but `publish`.
    static let perFrame = allCases.filter { $0 != .publish }
}

/// When one sampled acknowledged ingest frame passed the pipeline's own stages (monotonic
/// nanoseconds); the log's stages come from the group commit that wrote it (``CommitTimeline``).
struct IngestStageTrace {
    /// One acknowledged frame in this many is traced: a trace costs a few clock reads, a lock
    /// and seven histogram records.
    static let sampleEvery: UInt64 = 16

    var received: UInt64
    var applied: UInt64 = 0
    var appended: UInt64 = 0

    /// The stages of the frame written by `commit`, completed at `completed` and answered at
    /// `replied`, in the order of ``IngestStage``. From received to completed they add up to the
    /// frame's acknowledgement latency.
    func stages(writtenBy commit: GroupCommit, completed: UInt64, replied: UInt64) -> [(IngestStage, UInt64)] {
        var stages: [(IngestStage, UInt64)] = [
            (.apply, ServiceClock.nanoseconds(from: received, to: applied)),
            (.append, ServiceClock.nanoseconds(from: applied, to: appended)),
            (.commitWait, ServiceClock.nanoseconds(from: appended, to: commit.startedNanoseconds)),
            (.write, ServiceClock.nanoseconds(from: commit.startedNanoseconds, to: commit.writtenNanoseconds)),
        ]
        if commit.syncDuration != nil {
            stages.append(
                (.fdatasync, ServiceClock.nanoseconds(from: commit.writtenNanoseconds, to: commit.finishedNanoseconds))
            )
        }
        stages.append((.completion, ServiceClock.nanoseconds(from: commit.finishedNanoseconds, to: completed)))
        stages.append((.reply, ServiceClock.nanoseconds(from: completed, to: replied)))
        return stages
    }
}
