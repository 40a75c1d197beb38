import ReceiptsCore
import Testing

/// The text under the sender's message (SPEC §4 table).
struct DisplayTextTests {
    static func status(_ status: ReceiptStatus, readAt: Int64? = nil) -> MessageStatus {
        MessageStatus(
            conversation: "c",
            message: "m",
            sequence: 1,
            sender: "A",
            sentAt: Timestamp(milliseconds: 0),
            status: status,
            recipientCount: 5,
            deliveredCount: 5,
            readCount: 2,
            deliveredAt: nil,
            readAt: readAt.map(Timestamp.init),
            isSystem: false,
            isEdited: false,
            isDeleted: false
        )
    }

    /// 2023-11-14T17:42:00Z.
    static let fiveFortyTwoPM: Int64 = 1_699_983_720_000

    @Test(arguments: [
        (ReceiptStatus.none, ""), (.notDelivered, ""), (.delivered, "Delivered"),
        (.readBySome, "Read by some users"), (.readByAll, "Read by all users"),
    ])
    func textPerStatus(status: ReceiptStatus, text: String) {
        #expect(DisplayText.text(for: Self.status(status), viewer: Viewer(user: "A")) == text)
    }

    @Test func onlyTheSenderSeesReceipts() {
        for status in [ReceiptStatus.delivered, .read, .readBySome, .readByAll] {
            #expect(
                DisplayText.text(for: Self.status(status, readAt: Self.fiveFortyTwoPM), viewer: Viewer(user: "B")) == ""
            )
        }
    }

    @Test func readByCounts() {
        let text = DisplayText.text(for: Self.status(.readBySome), viewer: Viewer(user: "A", prefersCounts: true))
        #expect(text == "Read by 2 of 5")
    }

    @Test func readAtInUTCByDefault() {
        let text = DisplayText.text(for: Self.status(.read, readAt: Self.fiveFortyTwoPM), viewer: Viewer(user: "A"))
        #expect(text.hasPrefix("Read at 5:42"))
        #expect(text.hasSuffix("PM"))
    }

    @Test func readAtInTheViewersTimeZoneAndLocale() {
        let paris = DisplayText.text(
            for: Self.status(.read, readAt: Self.fiveFortyTwoPM),
            viewer: Viewer(user: "A", timeZone: "Europe/Paris", locale: "fr_FR")
        )
        #expect(paris == "Read at 18:42")
        let newYork = DisplayText.text(
            for: Self.status(.read, readAt: Self.fiveFortyTwoPM),
            viewer: Viewer(user: "A", timeZone: "America/New_York")
        )
        #expect(newYork.hasPrefix("Read at 12:42"))
        #expect(newYork.hasSuffix("PM"))
        // An unknown time zone falls back to UTC; formatters are cached, answers stay the same.
        for _ in 0..<3 {
            let unknown = DisplayText.text(
                for: Self.status(.read, readAt: Self.fiveFortyTwoPM),
                viewer: Viewer(user: "A", timeZone: "Mars/Olympus")
            )
            #expect(unknown.hasPrefix("Read at 5:42"))
        }
    }

    @Test(arguments: ["", "UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "GMT+5", "Etc/GMT-3"])
    func knownTimeZones(identifier: String) {
        #expect(DisplayText.isKnownTimeZone(identifier))
    }

    /// Unknown zones, a wrong case (IANA names are case-sensitive), and one too long to be a zone.
    @Test(arguments: [
        "Not/AZone", "Mars/Olympus", "europe/paris", "utc", "Europe/" + String(repeating: "x", count: 64),
    ])
    func unknownTimeZones(identifier: String) {
        // Twice: the second answer comes from the cache.
        #expect(!DisplayText.isKnownTimeZone(identifier))
        #expect(!DisplayText.isKnownTimeZone(identifier))
    }

    @Test(arguments: ["", "en_US", "fr_FR", "fr", "en-GB", "zh-Hant-TW", "es_419", "sr_Latn_RS", "de_DE@euro"])
    func knownLocales(identifier: String) {
        #expect(DisplayText.isKnownLocale(identifier))
    }

    /// An unknown language or region, something that is not a locale, and one too long to be one.
    @Test(arguments: ["xx_INVALID", "fr_XX", "english", "C", "POSIX", "_US", "en_" + String(repeating: "x", count: 64)])
    func unknownLocales(identifier: String) {
        #expect(!DisplayText.isKnownLocale(identifier))
        #expect(!DisplayText.isKnownLocale(identifier))
    }
}
