import Foundation
import ReceiptsTestKit
import ReceiptsTestTraits
import Testing

/// The README quick start through the real receiptctl binary.
@Suite(.serialized, .startsProcesses)
struct ReceiptctlTests {
    /// Runs receiptctl against the daemon's data directory; returns its exit status and output.
    ///
    /// Output goes to a file, not a pipe, so that a hung receiptctl cannot block the read:
    /// it gets 30 s, then SIGKILL and a thrown error.
    private func receiptctl(
        _ daemon: ReceiptdProcess,
        _ arguments: [String],
        stdin: String? = nil,
        output: String = "receiptctl.out"
    ) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = ReceiptdLauncher.binaryDirectory.appendingPathComponent("receiptctl")
        let command = arguments.first.map { [$0] } ?? []
        let subcommand = arguments.count > 1 && ["log"].contains(arguments[0]) ? [arguments[1]] : []
        process.arguments =
            command + subcommand + ["--data-dir", daemon.dataDirectory]
            + arguments.dropFirst(command.count + subcommand.count)
        let run = try await process.runToEnd(
            outputPath: "\(daemon.dataDirectory)/\(output)",
            input: stdin,
            seconds: 30
        )
        return (run.status, run.output)
    }

    @Test("Quick start: a direct message goes from nothing to Read at <time> with receiptctl")
    func quickStart() async throws {
        let daemon = try await ReceiptdProcess()
        let setup = try await receiptctl(
            daemon,
            ["send", "conversation", "--conversation", "c1", "--conversation-kind", "direct", "--members", "alice,bob"]
        )
        #expect(setup.0 == 0 && setup.1.contains("accepted"), "\(setup.1)")
        #expect(
            try await receiptctl(
                daemon,
                ["send", "message", "--conversation", "c1", "--message", "m1", "--sender", "alice"]
            )
            .0 == 0
        )

        let nothing = try await receiptctl(
            daemon,
            ["query", "status", "--conversation", "c1", "--message", "m1", "--viewer", "alice"]
        )
        #expect(nothing.1.contains("notDelivered") && nothing.1.contains("text \"\""), "\(nothing.1)")

        let sendJSON = try await receiptctl(
            daemon,
            ["send", "--json"],
            stdin: #"{"kind":"delivered","conversation":"c1","user":"bob","message":"m1"}"# + "\n"
        )
        #expect(sendJSON.0 == 0 && sendJSON.1.contains("accepted"), "\(sendJSON.1)")
        let shown = try await receiptctl(
            daemon,
            ["query", "status", "--conversation", "c1", "--message", "m1", "--viewer", "alice"]
        )
        #expect(shown.1.contains("text \"Delivered\""), "\(shown.1)")

        #expect(
            try await receiptctl(daemon, ["send", "read", "--conversation", "c1", "--user", "bob", "--message", "m1"]).0
                == 0
        )
        let read = try await receiptctl(
            daemon,
            [
                "query", "status", "--conversation", "c1", "--message", "m1", "--viewer", "alice", "--time-zone",
                "America/New_York",
            ]
        )
        #expect(read.1.contains("text \"Read at "), "\(read.1)")

        let rejected = try await receiptctl(
            daemon,
            ["send", "read", "--conversation", "c1", "--user", "mallory", "--message", "m1"]
        )
        #expect(rejected.1.contains("rejected"), "\(rejected.1)")

        let stats = try await receiptctl(daemon, ["stats"])
        #expect(stats.1.contains("receiptd.events.accepted 4"), "\(stats.1)")

        let compact = try await receiptctl(daemon, ["log", "compact"])
        #expect(compact.0 == 0 && compact.1.contains("compacted"), "\(compact.1)")
        let verify = try await receiptctl(daemon, ["log", "verify"])
        #expect(verify.0 == 0, "\(verify.1)")
    }

    @Test("A message sent with mentions shows in the mentioned user's unread counts")
    func mentions() async throws {
        let daemon = try await ReceiptdProcess()
        _ = try await receiptctl(
            daemon,
            ["send", "conversation", "--conversation", "g1", "--members", "alice,bob,carol"]
        )
        let sent = try await receiptctl(
            daemon,
            [
                "send", "message", "--conversation", "g1", "--message", "m1", "--sender", "alice", "--mentions",
                "bob,zed",
            ]
        )
        #expect(sent.0 == 0 && sent.1.contains("accepted"), "\(sent.1)")
        let everyone = try await receiptctl(
            daemon,
            ["send", "--json"],
            stdin: #"{"kind":"message","conversation":"g1","message":"m2","sender":"alice","mentionsEveryone":true}"#
                + "\n"
        )
        #expect(everyone.0 == 0 && everyone.1.contains("accepted"), "\(everyone.1)")
        let bob = try await receiptctl(daemon, ["query", "unread", "--user", "bob"])
        #expect(bob.1.contains("g1: 2 unread, 2 mentioning them"), "\(bob.1)")
        let carol = try await receiptctl(daemon, ["query", "unread", "--user", "carol", "--json"])
        #expect(carol.1.contains(#""unreadMentions":1"#), "\(carol.1)")
    }

    @Test("tail --user prints the user's current read states, then a read in a thread as it happens")
    func tailUser() async throws {
        let daemon = try await ReceiptdProcess()
        for arguments in [
            ["send", "conversation", "--conversation", "g1", "--members", "alice,bob,carol"],
            ["send", "message", "--conversation", "g1", "--message", "m1", "--sender", "alice"],
        ] {
            #expect(try await receiptctl(daemon, arguments).0 == 0)
        }
        let outputPath = "\(daemon.dataDirectory)/tail.out"
        let tail = Task {
            try await receiptctl(daemon, ["tail", "--user", "bob", "--count", "2", "--json"], output: "tail.out")
        }
        // The subscription starts from bob's current states (the time 0): once that is printed,
        // what follows is published to it.
        for _ in 0..<100 {
            if let printed = try? String(contentsOfFile: outputPath, encoding: .utf8),
                printed.contains(#""updatedAtMs":0"#)
            {
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        for arguments in [
            ["send", "message", "--conversation", "g1", "--message", "r1", "--sender", "alice", "--thread", "m1"],
            ["send", "read", "--conversation", "g1", "--user", "bob", "--message", "r1", "--thread", "m1"],
        ] {
            #expect(try await receiptctl(daemon, arguments).0 == 0)
        }
        let (status, output) = try await tail.value
        let lines = output.split(separator: "\n").map(String.init).filter { $0.contains("updateSequence") }
        #expect(status == 0 && lines.count == 2, "\(output)")
        let current = lines.first ?? ""
        #expect(current.contains(#""user":"bob""#) && current.contains(#""unread":1"#), "\(current)")
        #expect(!current.contains(#""thread""#), "bob holds no place in a thread yet: \(current)")
        let read = lines.last ?? ""
        #expect(read.contains(#""thread":"m1""#) && read.contains(#""readUpTo":2"#), "\(read)")
        #expect(!read.contains(#""updatedAtMs":0"#), "a change published after the start: \(read)")
    }
}
