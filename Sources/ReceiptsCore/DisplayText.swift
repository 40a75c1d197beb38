import Foundation
import Synchronization

/// The text a client shows under the sender's message (SPEC §4's table), for one viewer.
public enum DisplayText {
    /// The display text of a status for a viewer.
    ///
    /// Only the sender sees receipts: for anyone else, and for `none` / `notDelivered`, the
    /// text is empty. A direct read shows "Read at <time>" with the time in the viewer's time
    /// zone (empty or unknown = UTC) and locale (empty = en_US), short time style.
    ///
    /// - Parameters:
    ///   - status: The message status.
    ///   - viewer: Who looks, with their time zone, locale and group style.
    /// - Returns: The text, possibly empty.
    public static func text(for status: MessageStatus, viewer: Viewer) -> String {
        guard viewer.user == status.sender else { return "" }
        switch status.status {
        case .none, .notDelivered:
            return ""
        case .delivered:
            return "Delivered"
        case .read:
            guard let readAt = status.readAt else { return "Read" }
            return "Read at " + formattedTime(readAt, timeZone: viewer.timeZone, locale: viewer.locale)
        case .readBySome:
            return viewer.prefersCounts
                ? "Read by \(status.readCount) of \(status.recipientCount)" : "Read by some users"
        case .readByAll:
            return "Read by all users"
        }
    }

    /// Formatters by (time zone, locale): creating a `DateFormatter` costs far more than using it.
    private static let formatters = Mutex<[FormatterKey: DateFormatter]>([:])

    private struct FormatterKey: Hashable {
        var timeZone: String
        var locale: String
    }

    /// The short time of `time` in a time zone and locale.
    static func formattedTime(_ time: Timestamp, timeZone: String, locale: String) -> String {
        let date = Date(timeIntervalSince1970: Double(time.milliseconds) / 1000)
        let key = FormatterKey(timeZone: timeZone, locale: locale)
        return formatters.withLock { cache in
            if let formatter = cache[key] { return formatter.string(from: date) }
            let formatter = DateFormatter()
            formatter.dateStyle = .none
            formatter.timeStyle = .short
            formatter.locale = Locale(identifier: locale.isEmpty ? "en_US" : locale)
            formatter.timeZone =
                TimeZone(identifier: timeZone.isEmpty ? "UTC" : timeZone) ?? TimeZone(identifier: "UTC")
            if cache.count >= 1024 { cache.removeAll() }
            cache[key] = formatter
            return formatter.string(from: date)
        }
    }
}
