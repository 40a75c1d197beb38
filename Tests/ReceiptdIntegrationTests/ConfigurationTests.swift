import Foundation
import ReceiptsTestKit
import ReceiptsWire
import Testing

/// How receiptd finds its place among the workers from flags and the environment.
@Suite(.serialized)
struct ConfigurationTests {
    @Test("HOSTNAME=debian-12 and no worker flags: worker 0 of 1 (the pod ordinal is opt-in)")
    func hostnameAloneIsNotAnOrdinal() async throws {
        let daemon = try ReceiptdProcess(environment: ["HOSTNAME": "debian-12"])
        let health = try await daemon.health()
        #expect(health.workerIndex == 0)
        #expect(health.workerCount == 1)
    }

    @Test("RECEIPTD_WORKER_INDEX_FROM_HOSTNAME=1, HOSTNAME=receiptd-2, --worker-count 3: worker 2 of 3")
    func podOrdinalFromHostname() async throws {
        let daemon = try ReceiptdProcess(
            arguments: ["--worker-count", "3"],
            environment: ["HOSTNAME": "receiptd-2", "RECEIPTD_WORKER_INDEX_FROM_HOSTNAME": "1"]
        )
        let health = try await daemon.health()
        #expect(health.workerIndex == 2)
        #expect(health.workerCount == 3)
    }

    @Test("A restart with other pending-receipt settings is refused unless the operator accepts the change")
    func replaySettingsAreKept() async throws {
        let daemon = try ReceiptdProcess(arguments: ["--pending-limit", "10"])
        #expect(try daemon.terminate() == 0)

        let changed = ReceiptdLauncher.process(arguments: ["--data-dir", daemon.dataDirectory, "--pending-limit", "20"])
        let output = Pipe()
        changed.standardError = output
        changed.standardOutput = output
        try changed.run()
        #expect(changed.waitForExit(seconds: 15), "a refused start exits on its own")
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(changed.terminationStatus != 0)
        #expect(text.contains("pending_receipt_limit=10") && text.contains("pending_receipt_limit=20"), "\(text)")

        let accepted = try ReceiptdProcess(
            dataDirectory: daemon.dataDirectory,
            arguments: ["--pending-limit", "20", "--accept-settings-change"]
        )
        #expect(try await accepted.health().workerCount == 1)
        #expect(try accepted.terminate() == 0)
        let again = try ReceiptdProcess(dataDirectory: daemon.dataDirectory, arguments: ["--pending-limit", "20"])
        #expect(try again.terminate() == 0, "the accepted settings are the recorded ones now")
    }
}
