import ArgumentParser

/// Workload flags shared by `run` and `bench`.
struct WorkloadOptions: ParsableArguments {
    @Option(help: "Gateways, each with its own event source and socket.")
    var gateways = 4

    @Option(help: "Conversations, spread over the gateways.")
    var conversations = 20_000

    @Option(help: "Smallest group conversation.")
    var groupMin = 3

    @Option(help: "Largest group conversation (at most 1023).")
    var groupMax = 12

    @Option(help: "Share of conversations that are direct (two members).")
    var directFraction = 0.7

    @Option(help: "Distinct users members are drawn from.")
    var users = 50_000

    @Option(help: "Share of events sent twice with the same event id.")
    var duplicateFraction = 0.01

    @Option(help: "Seed of the deterministic workload generator.")
    var seed: UInt64 = 1

    func validate() throws {
        guard gateways >= 1, conversations >= gateways else {
            throw ValidationError("need at least one gateway and one conversation per gateway")
        }
        guard groupMin >= 2, groupMax >= groupMin, groupMax <= 1023 else {
            throw ValidationError("group sizes must satisfy 2 <= group-min <= group-max <= 1023")
        }
        guard (0...1).contains(directFraction), (0..<1).contains(duplicateFraction) else {
            throw ValidationError("fractions must be between 0 and 1")
        }
        guard users >= groupMax else { throw ValidationError("users must be at least group-max") }
    }

    var shape: WorkloadShape {
        WorkloadShape(
            gateways: gateways,
            conversations: conversations,
            groupSizes: groupMin...groupMax,
            directFraction: directFraction,
            users: users,
            duplicateFraction: duplicateFraction,
            seed: seed
        )
    }
}
