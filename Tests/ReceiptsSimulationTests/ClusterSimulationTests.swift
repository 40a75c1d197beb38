import Foundation
import ReceiptsTestKit
import Testing

/// The cluster simulation (`ClusterSimulation`) over many seeds, with each planted bug, and the
/// replay of one seed.
///
/// `RECEIPTS_SIMULATION_SEEDS` sets how many seeds the sweep runs (1,000 by default, or 60 s
/// once 100 ran, whichever ends first); `RECEIPTS_SIMULATION_SEED` (and
/// `RECEIPTS_SIMULATION_BUG`, a `PlantedBug` name) make `replay` print that seed's whole trace.
@Suite struct ClusterSimulationTests {
    static let environment = ProcessInfo.processInfo.environment
    /// The sweep stops after 60 s only once this many seeds ran (or after 3 minutes): on a
    /// machine busy with every other test, a minute may hold fewer.
    static let fewestSeeds: UInt64 = 100

    @Test func everySeedKeepsTheInvariants() async throws {
        let seeds = UInt64(Self.environment["RECEIPTS_SIMULATION_SEEDS"] ?? "") ?? 1000
        let started = ContinuousClock.now
        var ran: UInt64 = 0
        var acknowledged = 0
        var faults = 0
        var takeovers = 0
        // On a serial queue of its own: a minute of seeds must not take one of the cooperative
        // pool's few threads from the tests running beside it.
        let failed = await withTaskExecutorPreference(BlockingWait.ownExecutor(label: "simulation-sweep")) {
            while ran < seeds {
                let elapsed = ContinuousClock.now - started
                if elapsed > .seconds(60), ran >= Self.fewestSeeds || elapsed > .seconds(180) { break }
                let simulation = ClusterSimulation(seed: ran)
                let failure = await simulation.run()
                #expect(failure == nil, "\(failure.map(String.init(describing:)) ?? "")")
                if failure != nil { return true }
                acknowledged += simulation.acknowledgedEvents
                faults += simulation.faults
                takeovers += simulation.takeovers
                ran += 1
            }
            return false
        }
        if failed { return }
        let seconds = Double((ContinuousClock.now - started).components.seconds) + 1e-18
        print(
            "simulation: \(ran) seeds, \(faults) faults, \(takeovers) takeovers, \(acknowledged) acknowledgements, "
                + "\(seconds) s"
        )
        #expect(takeovers > 0, "no standby took over from a silent primary in \(ran) seeds")
        #expect(ran >= min(seeds, Self.fewestSeeds), "too few seeds ran in 3 minutes to mean anything")
    }

    /// Each planted bug breaks an invariant within a few hundred seeds.
    @Test(arguments: PlantedBug.allCases)
    func aPlantedBugIsCaught(_ bug: PlantedBug) async throws {
        var caughtAt: UInt64?
        await withTaskExecutorPreference(BlockingWait.ownExecutor(label: "simulation-\(bug)")) {
            for seed in UInt64(0)..<400 {
                if let failure = await ClusterSimulation(seed: seed, bug: bug).run() {
                    caughtAt = seed
                    print("simulation: \(bug) caught by seed \(seed): \(failure.invariant)")
                    break
                }
            }
        }
        #expect(caughtAt != nil, "\(bug) was never caught in 400 seeds")
    }

    /// One seed gives one run: the same trace twice. With `RECEIPTS_SIMULATION_SEED`, that seed's
    /// trace is printed.
    @Test func replay() async throws {
        let seed = UInt64(Self.environment["RECEIPTS_SIMULATION_SEED"] ?? "") ?? 7
        let bug = Self.environment["RECEIPTS_SIMULATION_BUG"].flatMap(PlantedBug.init(rawValue:))
        let first = ClusterSimulation(seed: seed, bug: bug, keepsWholeTrace: true)
        let failure = await first.run()
        let second = ClusterSimulation(seed: seed, bug: bug, keepsWholeTrace: true)
        _ = await second.run()
        #expect(first.trace == second.trace, "seed \(seed) ran two ways")
        if Self.environment["RECEIPTS_SIMULATION_SEED"] != nil {
            print(first.trace.joined(separator: "\n"))
            print(failure.map { "FAILED: \($0.invariant)" } ?? "every invariant held")
        }
    }
}
