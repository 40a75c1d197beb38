import Foundation
import ReceiptsCore

/// The engine settings a data directory's log was written with.
///
/// Replay must decide every event exactly as it was decided live: with a lower pending
/// limit, say, a receipt acknowledged as held would be rejected on replay and its effect
/// lost. So the settings are kept beside the log, and a start with different ones is
/// refused unless the operator explicitly accepts the change.
///
/// The worker count is the exception: the one recorded is the count the log started with
/// (replay starts from it), and a later change of count is itself recorded in the log by a
/// move (deploy/SCALING.md), so the configured count only seeds a new log.
struct ReplaySettings: Equatable {
    var workerIndex: Int
    var workerCount: Int
    var pendingReceiptLimit: Int
    var pendingReceiptLifetime: Int64
    var duplicateWindow: UInt64

    static let fileName = "engine-settings"

    init(_ configuration: EngineConfiguration) {
        workerIndex = configuration.workerIndex
        workerCount = configuration.workerCount
        pendingReceiptLimit = configuration.pendingReceiptLimit
        pendingReceiptLifetime = configuration.pendingReceiptLifetime
        duplicateWindow = configuration.duplicateWindow
    }

    /// One `key=value` per line, stable order.
    var text: String {
        """
        worker_index=\(workerIndex)
        worker_count=\(workerCount)
        pending_receipt_limit=\(pendingReceiptLimit)
        pending_receipt_lifetime_ms=\(pendingReceiptLifetime)
        duplicate_window=\(duplicateWindow)

        """
    }

    /// Checks the directory's recorded settings against `self`, then records `self` with the
    /// recorded worker count.
    /// - Parameter acceptChange: the operator's explicit consent to replay with new settings.
    /// - Returns: The worker count the log started with: the recorded one, else `self`'s.
    /// - Throws: `ServiceError` `.configuration` naming both settings when they differ.
    func reconcile(directory: String, acceptChange: Bool) throws(ServiceError) -> Int {
        let path = "\(directory)/\(Self.fileName)"
        let recorded = try? String(contentsOfFile: path, encoding: .utf8)
        var settings = self
        if let count = recorded.flatMap(Self.recordedWorkerCount) { settings.workerCount = count }
        let text = settings.text
        if let recorded, recorded != text, !acceptChange {
            throw ServiceError(
                .configuration,
                """
                the log in \(directory) was written with other engine settings; replaying it with these \
                could decide events differently than they were acknowledged. Recorded: \
                \(recorded.split(separator: "\n").joined(separator: ", ")); now: \
                \(text.split(separator: "\n").joined(separator: ", ")). Start with the recorded settings, \
                or pass --accept-settings-change to replay with the new ones.
                """
            )
        }
        try Self.record(text, directory: directory)
        return settings.workerCount
    }

    /// The text of the settings recorded in `directory`; empty when there are none (a new member).
    static func recordedText(directory: String) -> String {
        (try? String(contentsOfFile: "\(directory)/\(fileName)", encoding: .utf8)) ?? ""
    }

    /// Records settings `text` in `directory` (a temporary file, synced, renamed over the old one).
    ///
    /// - Throws: `ServiceError` `.system` when the file cannot be written.
    static func record(_ text: String, directory: String) throws(ServiceError) {
        let path = "\(directory)/\(fileName)"
        do {
            let temporary = path + ".tmp"
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            let descriptor = open(temporary, O_RDONLY)
            if descriptor >= 0 {
                fsync(descriptor)
                close(descriptor)
            }
            guard rename(temporary, path) == 0 else {
                throw ServiceError(.system, "cannot rename \(temporary): \(String(cString: strerror(errno)))")
            }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(.system, "cannot record the engine settings in \(path)", cause: error)
        }
    }

    /// The `worker_count=` line of a recorded settings file.
    private static func recordedWorkerCount(_ text: String) -> Int? {
        text.split(separator: "\n").lazy.compactMap { line in
            line.hasPrefix("worker_count=") ? Int(line.dropFirst("worker_count=".count)) : nil
        }.first
    }
}
