import ReceiptLog
import Synchronization

/// The log writer's last group commits (reported on its thread before the durable position
/// moves past them), for the pipeline to find the one that wrote a traced frame.
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

    /// The commit that wrote the record ending at `position`: the first kept one that wrote up
    /// to it or past it; nil when that commit is no longer kept or not yet reported.
    func commit(covering position: LogPosition) -> GroupCommit? {
        ring.withLock { ring in
            guard position > ring.forgottenEnd else { return nil }
            for index in 0..<ring.commits.count {
                let commit = ring.commits[(ring.next + index) % ring.commits.count]
                if commit.end >= position { return commit }
            }
            return nil
        }
    }
}
