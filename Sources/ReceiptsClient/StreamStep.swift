/// Where an update stands against the last one applied from its publisher's stream (the Clone
/// pattern's rule, one for status and read-state subscriptions alike).
enum StreamStep: Equatable {
    /// At or before the last one applied: seen already (a snapshot covered it).
    case seen
    /// The very next: apply it.
    case next
    /// Another run, or a sequence skipped: repair from a snapshot.
    case gap

    /// The step of an update of `publisherRun` and `sequence`, the last one applied having been
    /// `sequence` `appliedSequence` of run `appliedRun`.
    init(publisherRun: UInt64, sequence: UInt64, afterRun appliedRun: UInt64, sequence appliedSequence: UInt64) {
        if publisherRun != appliedRun {
            self = .gap
        } else if sequence <= appliedSequence {
            self = .seen
        } else {
            self = sequence == appliedSequence + 1 ? .next : .gap
        }
    }
}
