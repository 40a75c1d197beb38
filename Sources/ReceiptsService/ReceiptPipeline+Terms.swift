import ReceiptLog
import ReceiptsReplication

extension ReceiptPipeline {
    /// Starts `term` with `member` as its primary: appends the `termStarted` record, waits until
    /// it is durable, then records the new history in the `terms` file (deploy/REPLICATION.md,
    /// section 7.1). A promoted standby calls it before it takes any event of its term.
    ///
    /// In that order, the file never names a term the log may lose; a crash between the two
    /// leaves the file behind the log, and recovery catches it up from the record. Blocks on the
    /// log's sync, as nothing of the term may be acknowledged before it anyway.
    ///
    /// - Throws: `ServiceError` `.configuration` when `term` is not newer than the last one or
    ///   `member` is not a valid member name (nothing is written), `.storage` when the log fails,
    ///   `.system` when the file cannot be written.
    func startTerm(_ term: UInt64, member: String) throws(ServiceError) {
        var history = terms
        do {
            try history.append(TermHistory.Entry(term: term, start: log.appendedPosition.offset, member: member))
        } catch {
            throw ServiceError(.configuration, "cannot start term \(term)", cause: error)
        }
        let record = LogRecord.termStarted(term: term, previousTerm: terms.last.term, member: member)
        do {
            _ = try append(record).get()
            try log.flush()
        } catch {
            throw ServiceError(.storage, "cannot log the start of term \(term)", cause: error)
        }
        try TermsFile.write(history, directory: configuration.dataDirectory)
        terms = history
    }
}
