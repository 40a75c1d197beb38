import Foundation
import Glibc
import ReceiptsReplication

/// The `terms` file of a data directory: the log's `TermHistory`, one line per term
/// (`term start member`; term 0's line has no member), like Kafka's `leader-epoch-checkpoint`.
///
/// The log is the source of truth: a term exists once its `termStarted` record is durable, and
/// a cut log (deploy/REPLICATION.md, section 7.5) no longer holds the terms it cut. The file is
/// only a cache of the records that compaction deletes: once a snapshot covers a term's record,
/// recovery replays from the snapshot and never sees that record again, so the entries before
/// the snapshot survive only here (and travel beside a snapshot shipped to a standby, section
/// 4.2). So recovery rebuilds the file from both: the file's entries that start before the
/// replay start, then the term records replay finds; an entry past that point that the log no
/// longer holds is dropped. A crash between a term record and the file's write (the file
/// behind), or between a cut and the file's rewrite (the file ahead), is repaired that way.
///
/// Written atomically (a temporary file, synced, renamed over the old one, the directory
/// synced), so a crash leaves the old file or the new one, never a mix.
enum TermsFile {
    /// The file's name in the data directory.
    static let fileName = "terms"

    /// The file's text for `history`.
    static func text(_ history: TermHistory) -> String {
        history.entries.map { entry in
            entry.member.isEmpty ? "\(entry.term) \(entry.start)\n" : "\(entry.term) \(entry.start) \(entry.member)\n"
        }.joined()
    }

    /// Reads a history back from its text.
    ///
    /// - Throws: `TermHistory.Invalid` naming the line that is not `term start [member]`, or the
    ///   entries that cannot form a history.
    static func history(parsing text: String) throws(TermHistory.Invalid) -> TermHistory {
        guard text.hasSuffix("\n") || text.isEmpty else {
            throw TermHistory.Invalid(description: "the last line is not whole")
        }
        var entries: [TermHistory.Entry] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().enumerated() {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count >= 2, let term = UInt64(fields[0]), let start = UInt64(fields[1]) else {
                throw TermHistory.Invalid(description: "line \(number + 1) is not \"term start member\": \"\(line)\"")
            }
            let member = fields.count > 2 ? String(fields[2]) : ""
            entries.append(TermHistory.Entry(term: term, start: start, member: member))
        }
        return try TermHistory(entries: entries)
    }

    /// The history recorded in `directory`, or nil when there is no `terms` file.
    ///
    /// - Throws: `ServiceError` `.recovery` when the file cannot be read or is not a history.
    static func read(directory: String) throws(ServiceError) -> TermHistory? {
        let path = "\(directory)/\(fileName)"
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try history(parsing: try String(contentsOfFile: path, encoding: .utf8))
        } catch {
            throw ServiceError(
                .recovery,
                "the terms file \(path) is damaged; removing it rebuilds it from the log, without the terms "
                    + "before the newest snapshot",
                cause: error
            )
        }
    }

    /// Records `history` in `directory`, atomically and durably.
    ///
    /// - Throws: `ServiceError` `.system` naming the call that failed.
    static func write(_ history: TermHistory, directory: String) throws(ServiceError) {
        let path = "\(directory)/\(fileName)"
        let temporary = path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("open", temporary) }
        var bytes = Array(text(history).utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                let error = failure("write", temporary)
                close(descriptor)
                throw error
            }
            bytes = bytes.dropFirst(written)
        }
        guard fsync(descriptor) == 0 else {
            let error = failure("fsync", temporary)
            close(descriptor)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else { throw failure("rename", temporary) }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryDescriptor >= 0 else { throw failure("open", directory) }
        defer { close(directoryDescriptor) }
        guard fsync(directoryDescriptor) == 0 else { throw failure("fsync", directory) }
    }

    private static func failure(_ call: String, _ path: String) -> ServiceError {
        ServiceError(.system, "cannot record the terms: \(call) \(path): \(String(cString: strerror(errno)))")
    }
}
