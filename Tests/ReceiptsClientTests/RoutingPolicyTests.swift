import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// The one rule ingest, snapshot repairs and typed queries share for NOT_OWNER, UNAVAILABLE,
/// `moving` and NOT_PRIMARY.
struct RoutingPolicyTests {
    private static let policy: RoutingPolicy = {
        var configuration = ReceiptsClient.Configuration(
            cluster: Cluster(workers: [.init(dataDirectory: "/nonexistent")]),
            source: "gw"
        )
        configuration.maxRedirects = 2
        configuration.unavailableBackoffMilliseconds = 30
        configuration.movingBackoffMilliseconds = 70
        configuration.maxPrimarySwitches = 3
        return RoutingPolicy(configuration)
    }()

    @Test func notOwnerFollowsTheNamedOwnerWithinTheHopLimit() {
        let refusal = RoutingPolicy.Refusal.notOwner(owner: 3)
        #expect(Self.policy.decide(refusal, from: 0, hops: 0) { _ in true } == .follow(worker: 3))
        #expect(Self.policy.decide(refusal, from: 0, hops: 1) { _ in true } == .follow(worker: 3))
        #expect(Self.policy.decide(refusal, from: 0, hops: 2) { _ in true } == .giveUp)
    }

    @Test func notOwnerWithoutAnotherReachableOwnerIsTheAnswer() {
        #expect(Self.policy.decide(.notOwner(owner: nil), from: 0, hops: 0) { _ in true } == .giveUp)
        #expect(Self.policy.decide(.notOwner(owner: 0), from: 0, hops: 0) { _ in true } == .giveUp)
        #expect(Self.policy.decide(.notOwner(owner: 5), from: 0, hops: 0) { $0 < 5 } == .giveUp)
    }

    @Test func reachabilityIsAskedOnlyForAWorkerToFollow() {
        var asked: [Int] = []
        _ = Self.policy.decide(.notOwner(owner: 0), from: 0, hops: 0) {
            asked.append($0)
            return true
        }
        _ = Self.policy.decide(.notOwner(owner: 4), from: 0, hops: 2) {
            asked.append($0)
            return true
        }
        _ = Self.policy.decide(.unavailable, from: 0, hops: 0) {
            asked.append($0)
            return true
        }
        #expect(asked.isEmpty, "asking makes a worker's sockets")
        _ = Self.policy.decide(.notOwner(owner: 4), from: 0, hops: 1) {
            asked.append($0)
            return true
        }
        #expect(asked == [4])
    }

    @Test func unavailableAndMovingWaitTheirOwnPauses() {
        #expect(Self.policy.decide(.unavailable, from: 1, hops: 0) { _ in true } == .retry(afterMilliseconds: 30))
        #expect(Self.policy.decide(.moving, from: 1, hops: 9) { _ in true } == .retry(afterMilliseconds: 70))
    }

    @Test func refusalsAreReadFromErrorRepliesAndRejections() {
        #expect(
            RoutingPolicy.Refusal(ErrorReply(code: .notOwner, message: "", ownerWorker: 2)) == .notOwner(owner: 2)
        )
        #expect(RoutingPolicy.Refusal(ErrorReply(code: .unavailable, message: "")) == .unavailable)
        #expect(RoutingPolicy.Refusal(ErrorReply(code: .notFound, message: "")) == nil)
        #expect(RoutingPolicy.Refusal(ErrorReply(code: .invalidArgument, message: "")) == nil)
        #expect(RoutingPolicy.Refusal(Rejection(.notOwner, "", ownerWorker: 1)) == .notOwner(owner: 1))
        #expect(RoutingPolicy.Refusal(Rejection(.moving, "")) == .moving)
        #expect(RoutingPolicy.Refusal(Rejection(.notAMember, "")) == nil)
    }

    @Test func notPrimaryFollowsTheNamedMemberWithinTheSwitchLimitWithoutCountingRedirects() {
        #expect(Self.policy.decideNotPrimary(naming: 1, from: 0, recentSwitches: 0) == .switchMember(to: 1))
        #expect(Self.policy.decideNotPrimary(naming: 0, from: 2, recentSwitches: 2) == .switchMember(to: 0))
        #expect(Self.policy.decideNotPrimary(naming: 1, from: 0, recentSwitches: 3) == .retry(afterMilliseconds: 30))
    }

    @Test func notPrimaryNamingNoOtherMemberWaitsTheUnavailablePause() {
        #expect(Self.policy.decideNotPrimary(naming: nil, from: 0, recentSwitches: 0) == .retry(afterMilliseconds: 30))
        #expect(Self.policy.decideNotPrimary(naming: 1, from: 1, recentSwitches: 0) == .retry(afterMilliseconds: 30))
    }

    @Test func notPrimaryIsNoRefusalOfOneRequest() {
        // It moves the whole ordinal, so `PrimaryTracker` takes it, not `decide`.
        let answer = ErrorReply(code: .notPrimary, message: "", primary: .init(member: "b-0"), term: 2)
        #expect(RoutingPolicy.Refusal(answer) == nil)
    }
}
