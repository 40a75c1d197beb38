import ReceiptsCore
import Testing

/// A "Read by" cursor's token is opaque and bound to its message: it reads back as the place it
/// was made from for that message only, and every other string is no cursor.
struct ReadDetailCursorTests {
    static let places = [
        ReadDetailCursor(state: .read, readAt: 1_700_000_000_000, user: "u00001"),
        ReadDetailCursor(state: .read, readAt: -7, user: "a/b/"),
        ReadDetailCursor(state: .delivered, readAt: 0, user: "🙂 é"),
        ReadDetailCursor(state: .notDelivered, readAt: 0, user: "/"),
    ]

    @Test(arguments: places)
    func aTokenReadsBackAsItsPlaceForItsMessageOnly(place: ReadDetailCursor) {
        let token = place.token(conversation: "g1", message: "m1")
        #expect(ReadDetailCursor(token: token, conversation: "g1", message: "m1") == place)
        #expect(token.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") })
        #expect(ReadDetailCursor(token: token, conversation: "g1", message: "m2") == nil)
        #expect(ReadDetailCursor(token: token, conversation: "g2", message: "m1") == nil)
        // The ids are kept apart: "g1" + "m1" is not "g" + "1m1".
        #expect(ReadDetailCursor(token: token, conversation: "g", message: "1m1") == nil)
    }

    @Test func everyOtherStringIsNoCursor() {
        let token = Self.places[0].token(conversation: "g1", message: "m1")
        var refused = [
            "", "1/9999999999999/zzz", "1/1700000000000/u00001", "garbage", token + token, token + "=",
            String(token.dropLast()), String(token.dropFirst()), " " + token, token + "\u{0}",
        ]
        // Every one-character change of the token.
        for (i, character) in token.enumerated() {
            let other: Character = character == "A" ? "B" : "A"
            refused.append(String(token.prefix(i)) + String(other) + String(token.dropFirst(i + 1)))
        }
        for string in refused {
            #expect(ReadDetailCursor(token: string, conversation: "g1", message: "m1") == nil, "\(string)")
        }
    }
}
