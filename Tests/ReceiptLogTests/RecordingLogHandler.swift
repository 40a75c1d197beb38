import Logging
import Synchronization

/// A log handler that keeps every entry, so tests can assert on the lines the log writes.
final class RecordingLogHandler: LogHandler, Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    private let storage = Mutex<[Entry]>([])

    var entries: [Entry] {
        self.storage.withLock { $0 }
    }

    var logger: Logger {
        var logger = Logger(label: "receiptlog.tests") { _ in self }
        logger.logLevel = .trace
        return logger
    }

    func log(event: LogEvent) {
        self.storage.withLock {
            $0.append(Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
        }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
}
