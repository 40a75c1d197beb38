import Foundation
import Testing

/// The cluster simulation (`ClusterSimulation`) over many seeds, with each planted bug, and the
/// replay of one seed.
///
/// `RECEIPTS_SIMULATION_SEEDS` sets how many seeds the sweep runs (1,000 by default, or 60 s,
/// whichever ends first); `RECEIPTS_SIMULATION_SEED` (and `RECEIPTS_SIMULATION_BUG`, a
/// `PlantedBug` name) make `replay` print that seed's whole trace.
@Suite struct ClusterSimulationTests {
    static let environment = ProcessInfo.processInfo.environment

    @Test func everySeedKeepsTheInvariants() async throws {
        let seeds = UInt64(Self.environment["RECEIPTS_SIMULATION_SEEDS"] ?? "") ?? 1000
        let started = ContinuousClock.now
        var ran: UInt64 = 0
        var acknowledged = 0
        var faults = 0
        while ran < seeds, ContinuousClock.now - started < .seconds(60) {
            let simulation = ClusterSimulation(seed: ran)
            let failure = await simulation.run()
            #expect(failure == nil, "\(failure.map(String.init(describing:)) ?? "")")
            if failure != nil { return }
            acknowledged += simulation.acknowledgedEvents
            faults += simulation.faults
            ran += 1
        }
        let seconds = Double((ContinuousClock.now - started).components.seconds) + 1e-18
        print("simulation: \(ran) seeds, \(faults) faults, \(acknowledged) acknowledgements, \(seconds) s")
        #expect(ran >= 100, "too few seeds ran in 60 s to mean anything")
    }

    /// Each planted bug breaks an invariant within a few hundred seeds.
    @Test(arguments: PlantedBug.allCases)
    func aPlantedBugIsCaught(_ bug: PlantedBug) async throws {
        var caughtAt: UInt64?
        for seed in UInt64(0)..<400 {
            if let failure = await ClusterSimulation(seed: seed, bug: bug).run() {
                caughtAt = seed
                print("simulation: \(bug) caught by seed \(seed): \(failure.invariant)")
                break
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
