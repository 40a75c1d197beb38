import ArgumentParser
import Foundation
import ReceiptLog
import ReceiptsClient
import ReceiptsCore
import ZeroMQ

/// Changes the worker count: moves every conversation whose owner changes, then commits the
/// new count on every worker (deploy/SCALING.md).
struct Rebalance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move the conversations whose owner changes to a new worker count, under load.",
        discussion: """
            Stateless and resumable: every step is recorded in the workers' logs, so after a crash of
            the driver or of a worker, run the same command again and it carries on. It waits for
            workers that are down. Exits 0 once every worker serves the new count.
            Example (a StatefulSet going to 3 pods):
              receiptctl rebalance --to 3 --query-template 'tcp://receiptd-{index}.receiptd:7004'
            With replicated ordinals, every step goes to the ordinal's primary (two StatefulSets):
              receiptctl rebalance --to 3 --members receiptd,receiptd-b \\
                --query-template 'tcp://{member}-{index}.receiptd:7004'
            """
    )

    @Option(help: "The new worker count.")
    var to: Int

    @Option(help: "Every worker's query endpoint, with {index} for its ordinal (and {member} with --members).")
    var queryTemplate: String

    @Option(
        help: """
            Member sets of replicated ordinals, comma-separated in preference order, as receiptd's --members: \
            {member} in --query-template becomes each, and ordinal k's members are <set>-k.
            """
    )
    var members: String?

    /// The member sets `--members` lists; empty without it.
    private var memberSets: [String] {
        members?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) ?? []
    }

    @Option(help: "Conversations per export and import.")
    var batch: Int = 256

    @Option(help: "receiptd's CURVE public key file (RECEIPTD_CURVE_SERVER_PUBLIC_KEY_FILE; needs an operator key).")
    var curveServerKeyFile: String?

    @Option(help: "This operator's CURVE secret key file (RECEIPTD_CURVE_CLIENT_SECRET_KEY_FILE).")
    var curveClientKeyFile: String?

    @Option(help: "Milliseconds to pause after each batch, to spare a busy cluster (as Kafka's reassignment throttle).")
    var pauseMs: Int = 0

    @Option(help: "Milliseconds to wait for one reply before asking again.")
    var timeoutMs: Int = 10_000

    @Option(help: "Seconds after which the driver gives up (run it again to resume).")
    var giveUpAfterS: Int = 3600

    @Flag(help: "Print each step.")
    var verbose = false

    func validate() throws {
        guard (1..<Partitioning.workerLimit).contains(to) else {
            throw ValidationError("--to must be in 1..<\(Partitioning.workerLimit)")
        }
        guard queryTemplate.contains("{index}") else { throw ValidationError("--query-template needs {index}") }
        guard queryTemplate.contains("{member}") == (members != nil) else {
            throw ValidationError("--query-template has {member} exactly when --members is given")
        }
        guard !memberSets.contains(where: \.isEmpty), Set(memberSets).count == memberSets.count else {
            throw ValidationError("--members must list distinct, non-empty member sets")
        }
        guard batch >= 1 else { throw ValidationError("--batch must be positive") }
        guard timeoutMs >= 1, giveUpAfterS >= 1 else { throw ValidationError("timeouts must be positive") }
        guard pauseMs >= 0 else { throw ValidationError("--pause-ms must not be negative") }
    }

    func run() async throws {
        let curve = try CurveClientKeys.fromFlags(
            serverPublicKeyFile: curveServerKeyFile,
            clientSecretKeyFile: curveClientKeyFile
        )
        let cluster = Cluster(
            workerCount: 1,
            members: memberSets,
            ingest: queryTemplate,
            query: queryTemplate,
            publish: queryTemplate
        )
        let deadline = ContinuousClock.now + .seconds(giveUpAfterS)
        try await Self.onThreadOfItsOwn { [self] in
            let driver = RebalanceDriver(
                queries: try LazyPirate(cluster: cluster, curve: curve),
                timeout: .milliseconds(timeoutMs),
                deadline: deadline,
                verbose: verbose
            )
            try driver.run(to: to, batch: batch, pause: .milliseconds(pauseMs))
        }
    }

    /// Runs `body` on a plain thread: the driver blocks in `zmq_poll` and sleeps between
    /// batches, which must never happen on Swift's cooperative pool, and its sockets stay on
    /// that one thread.
    static func onThreadOfItsOwn(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                nameCurrentThread("receiptctl-move")
                do {
                    try body()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            .start()
        }
    }
}
