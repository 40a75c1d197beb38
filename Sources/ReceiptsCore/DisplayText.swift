import Foundation
import Synchronization

/// The text a client shows under the sender's message (SPEC §4's table), for one viewer.
public enum DisplayText {
    /// The display text of a status for a viewer.
    ///
    /// Only the sender sees receipts: for anyone else, and for `none` / `notDelivered`, the
    /// text is empty. A direct read shows "Read at <time>" with the time in the viewer's time
    /// zone (empty or unknown = UTC) and locale (empty = en_US), short time style. The query
    /// endpoint refuses unknown ones first (``isKnownTimeZone(_:)``, ``isKnownLocale(_:)``).
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

    /// Whether a viewer's time zone is one Foundation knows: empty (UTC), or an identifier
    /// `TimeZone(identifier:)` takes, such as an IANA name ("Europe/Paris") or "GMT+5".
    ///
    /// For callers that refuse what ``text(for:viewer:)`` would show in UTC instead (the query
    /// endpoint). Answers are cached per identifier; no identifier longer than
    /// ``maxSettingBytes`` is known, so hostile ones never fill the cache with large keys.
    public static func isKnownTimeZone(_ identifier: String) -> Bool {
        isKnown(identifier, in: knownTimeZones) { TimeZone(identifier: $0) != nil }
    }

    /// Whether a viewer's locale is one Foundation knows: empty (en_US), or an identifier whose
    /// language is an ISO 639 code and whose region, if it has one, an ISO 3166 or UN M.49 code
    /// ("fr", "fr_FR", "zh-Hant-TW", "es_419"); "xx_INVALID" and "fr_XX" are not.
    ///
    /// `Locale(identifier:)` takes any string and formats an unknown one as the root locale, so
    /// the check reads the language and region it parsed. Cached as ``isKnownTimeZone(_:)``.
    public static func isKnownLocale(_ identifier: String) -> Bool {
        isKnown(identifier, in: knownLocales) { identifier in
            let locale = Locale(identifier: identifier)
            guard locale.language.languageCode?.isISOLanguage == true else { return false }
            return locale.region.map(\.isISORegion) ?? true
        }
    }

    /// The longest time zone or locale identifier that can be known: IANA names and locale
    /// identifiers are far shorter.
    public static let maxSettingBytes = 64

    /// Time zone identifiers already checked, and whether each is known.
    private static let knownTimeZones = Mutex<[String: Bool]>([:])
    /// Locale identifiers already checked, and whether each is known.
    private static let knownLocales = Mutex<[String: Bool]>([:])

    private static func isKnown(
        _ identifier: String,
        in cache: borrowing Mutex<[String: Bool]>,
        _ check: (String) -> Bool
    ) -> Bool {
        if identifier.isEmpty { return true }
        guard identifier.utf8.count <= maxSettingBytes else { return false }
        if let known = cache.withLock({ $0[identifier] }) { return known }
        // Checked outside the lock: two threads may both check a new identifier, with one answer.
        let known = check(identifier)
        cache.withLock { cache in
            if cache.count >= 1024 { cache.removeAll() }
            cache[identifier] = known
        }
        return known
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
