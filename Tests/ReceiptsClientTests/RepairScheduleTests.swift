import Testing

@testable import ReceiptsClient

/// A subscription's snapshot schedule, with time passed in: one ask per key at a time, the
/// first of two due times scheduled, the slow joiner's round once, and the next timer.
struct RepairScheduleTests {
    private let start = ContinuousClock.now

    private func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        start + .milliseconds(milliseconds)
    }

    @Test func oneAskPerKeyAtATimeAndALateAnswerIsNotTaken() {
        var schedule = RepairSchedule<String>()
        let asks = [schedule.ask("c1"), schedule.ask("c1"), schedule.ask("c2")]
        #expect(asks == [true, false, true], "a key asked already is not asked twice; another is")
        let answers = [schedule.answered("c1"), schedule.answered("c1")]
        #expect(answers == [true, false], "a second answer finds nothing asked")
        let again = schedule.ask("c1")
        #expect(again, "asked again once answered")
    }

    @Test func theFirstDueTimeScheduledStandsAndAnAskCancelsIt() {
        var schedule = RepairSchedule<Int>()
        schedule.schedule(0, at: at(100))
        schedule.schedule(0, at: at(50))
        #expect(schedule.nextTimer == at(100), "a repair due already is not moved")
        let early = schedule.takeDue(now: at(99))
        #expect(early.keys.isEmpty)
        let asked = schedule.ask(0)
        #expect(asked)
        #expect(schedule.nextTimer == nil, "asking cancels the due repair")
        let late = schedule.takeDue(now: at(200))
        #expect(late.keys.isEmpty)
    }

    @Test func anAskSentElsewhereKeepsItsDueRepair() {
        var schedule = RepairSchedule<String>()
        let asked = schedule.ask("c1")
        schedule.schedule("c1", at: at(100))
        let answered = schedule.answered("c1")
        schedule.askElsewhere("c1")
        #expect(asked && answered)
        #expect(schedule.nextTimer == at(100), "a redirect does not cancel the repair due")
        let again = schedule.ask("c1")
        #expect(!again, "still asking")
        let due = schedule.takeDue(now: at(100))
        #expect(due.keys == ["c1"])
    }

    @Test func dueKeysComeOnceInTheirOrder() {
        var schedule = RepairSchedule<String>()
        for (key, milliseconds) in [("c", 30), ("a", 10), ("b", 20), ("later", 500)] {
            schedule.schedule(key, at: at(milliseconds))
        }
        let due = schedule.takeDue(now: at(30))
        #expect(due.keys == ["a", "b", "c"])
        #expect(!due.settled)
        let again = schedule.takeDue(now: at(30))
        #expect(again.keys.isEmpty, "taken once")
        #expect(schedule.nextTimer == at(500))
        schedule.schedule("a", at: at(40))
        #expect(schedule.nextTimer == at(40), "a key taken may be due again")
    }

    @Test(arguments: [
        // (settle time, due times, now, settled, next timer after): milliseconds.
        (Int?.none, [Int](), 1000, false, Int?.none),
        (200, [], 100, false, 200),
        (200, [], 200, true, nil),
        (200, [50], 100, false, 200),
        (200, [300], 250, true, 300),
        (200, [300], 300, true, nil),
    ])
    func theSlowJoinersRoundComesOnce(settle: Int?, due: [Int], now: Int, settled: Bool, next: Int?) {
        var schedule = RepairSchedule<Int>(settleAt: settle.map(at))
        for (key, milliseconds) in due.enumerated() { schedule.schedule(key, at: at(milliseconds)) }
        let first = schedule.takeDue(now: at(now))
        #expect(first.settled == settled)
        #expect(schedule.nextTimer == next.map(at))
        let second = schedule.takeDue(now: at(now))
        #expect(!second.settled, "once")
    }
}
