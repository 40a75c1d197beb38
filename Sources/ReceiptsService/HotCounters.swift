/// The counters touched for every frame, resolved once.
struct HotCounters {
    let ingestFrames: ServiceCounters.Handle
    let subscribeFrames: ServiceCounters.Handle
    let queryFrames: ServiceCounters.Handle
    let eventsAccepted: ServiceCounters.Handle
    let eventsHeld: ServiceCounters.Handle
    let eventsDuplicate: ServiceCounters.Handle
    let updatesPublished: ServiceCounters.Handle

    init(_ counters: ServiceCounters) {
        ingestFrames = counters.handle(.framesReceived, label: "ingest")
        subscribeFrames = counters.handle(.framesReceived, label: "ingest_subscribe")
        queryFrames = counters.handle(.framesReceived, label: "query")
        eventsAccepted = counters.handle(.eventsAccepted)
        eventsHeld = counters.handle(.eventsHeld)
        eventsDuplicate = counters.handle(.eventsDuplicate)
        updatesPublished = counters.handle(.updatesPublished)
    }
}
