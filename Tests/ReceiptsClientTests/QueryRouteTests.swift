import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// One query's route, with time passed in: NOT_OWNER is followed within the hop limit,
/// UNAVAILABLE is asked again after the pause unless that passes the deadline, and any other
/// reply is the answer.
struct QueryRouteTests {
    private let start = ContinuousClock.now
    private let policy = RoutingPolicy(
        maxRedirects: 2,
        unavailableBackoffMilliseconds: 30,
        movingBackoffMilliseconds: 70,
        maxPrimarySwitches: 3
    )

    private func route(deadlineMilliseconds: Int = 1000) -> QueryRoute {
        QueryRoute(worker: 0, deadline: start + .milliseconds(deadlineMilliseconds), policy: policy)
    }

    private static func notOwner(_ owner: Int?) -> QueryReply {
        .error(ErrorReply(code: .notOwner, message: "moved", ownerWorker: owner))
    }

    private static let unavailable = QueryReply.error(ErrorReply(code: .unavailable, message: "frozen"))

    @Test func notOwnerIsFollowedWithinTheHopLimitThenIsTheAnswer() {
        var route = route()
        let steps = [1, 2, 0].map { owner in
            route.next(after: Self.notOwner(owner), now: start, canReach: { _ in true })
        }
        #expect(steps == [.follow(worker: 1), .follow(worker: 2), .answer(Self.notOwner(0))])
        #expect(route.worker == 2, "the last owner followed")
    }

    @Test func anOwnerTheClientCannotReachIsTheAnswer() {
        var route = route()
        let step = route.next(after: Self.notOwner(7), now: start, canReach: { $0 < 4 })
        #expect(step == .answer(Self.notOwner(7)))
        #expect(route.worker == 0)
    }

    @Test(arguments: [
        // (reply arrives at, deadline, retried at): milliseconds; nil: the reply is the answer.
        (0, 1000, Int?.some(30)),
        (969, 1000, 999),
        (970, 1000, nil),
        (2000, 1000, nil),
    ])
    func unavailableIsAskedAgainAfterThePauseWithinTheDeadline(arrives: Int, deadline: Int, retried: Int?) {
        var route = route(deadlineMilliseconds: deadline)
        let step = route.next(after: Self.unavailable, now: start + .milliseconds(arrives), canReach: { _ in true })
        let expected: QueryRoute.Step =
            retried.map { .retry(at: start + .milliseconds($0)) } ?? .answer(Self.unavailable)
        #expect(step == expected)
        #expect(route.worker == 0, "the same worker")
    }

    @Test func aReplyThatIsNoRefusalIsTheAnswer() {
        var route = route()
        let notFound = QueryReply.error(ErrorReply(code: .notFound, message: "no such message"))
        let step = route.next(after: notFound, now: start, canReach: { _ in true })
        #expect(step == .answer(notFound))
    }
}
