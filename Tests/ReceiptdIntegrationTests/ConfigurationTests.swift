import Foundation
import ReceiptsWire
import Testing

/// How receiptd finds its place among the workers from flags and the environment.
@Suite(.serialized)
struct ConfigurationTests {
    @Test("HOSTNAME=debian-12 and no worker flags: worker 0 of 1 (the pod ordinal is opt-in)")
    func hostnameAloneIsNotAnOrdinal() throws {
        let daemon = try ReceiptdProcess(environment: ["HOSTNAME": "debian-12"])
        let health = try daemon.health()
        #expect(health.workerIndex == 0)
        #expect(health.workerCount == 1)
    }

    @Test("RECEIPTD_WORKER_INDEX_FROM_HOSTNAME=1, HOSTNAME=receiptd-2, --worker-count 3: worker 2 of 3")
    func podOrdinalFromHostname() throws {
        let daemon = try ReceiptdProcess(
            arguments: ["--worker-count", "3"],
            environment: ["HOSTNAME": "receiptd-2", "RECEIPTD_WORKER_INDEX_FROM_HOSTNAME": "1"])
        let health = try daemon.health()
        #expect(health.workerIndex == 2)
        #expect(health.workerCount == 3)
    }
}
