import Foundation
import ReceiptsReplication
import Testing

@testable import ReceiptsService

/// The `terms` file: its lines, reading it back, refusing a damaged one, and writing it whole.
struct TermsFileTests {
    static let history: TermHistory = {
        var history = TermHistory()
        try! history.append(TermHistory.Entry(term: 1, start: 0, member: "receiptd-3"))
        try! history.append(TermHistory.Entry(term: 4, start: 900, member: "receiptd-b-3"))
        return history
    }()

    /// A fresh directory, removed after `body`.
    static func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("terms-file-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    @Test func oneLinePerTerm() throws {
        #expect(TermsFile.text(Self.history) == "0 0\n1 0 receiptd-3\n4 900 receiptd-b-3\n")
        #expect(try TermsFile.history(parsing: TermsFile.text(Self.history)) == Self.history)
        #expect(try TermsFile.history(parsing: "0 0\n") == TermHistory())
    }

    @Test func writtenThenReadBack() throws {
        try Self.withDirectory { directory in
            #expect(try TermsFile.read(directory: directory) == nil)
            try TermsFile.write(TermHistory(), directory: directory)
            try TermsFile.write(Self.history, directory: directory)
            #expect(try TermsFile.read(directory: directory) == Self.history)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["terms"])
        }
    }

    @Test(arguments: [
        ("", "starts with term 0 at 0"),
        ("1 0 receiptd-3\n", "starts with term 0 at 0"),
        ("0 0\n1 0 receiptd-3", "not whole"),
        ("0 0\n1 x receiptd-3\n", "line 2"),
        ("0 0\n\n", "line 2"),
        ("0 0\n2 0 receiptd-3\n1 5 receiptd-3\n", "term 1 cannot follow term 2"),
        ("0 0\n1 0 receiptd 3\n", "invalid member"),
    ])
    func aDamagedFileIsRefused(text: String, reason: String) throws {
        #expect(throws: TermHistory.Invalid.self) { try TermsFile.history(parsing: text) }
        do {
            _ = try TermsFile.history(parsing: text)
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
        try Self.withDirectory { directory in
            try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/terms"))
            do {
                _ = try TermsFile.read(directory: directory)
                Issue.record("read a damaged file")
            } catch let error as ServiceError {
                #expect(error.code == .recovery)
                #expect(error.message.contains("damaged"))
            }
        }
    }
}
