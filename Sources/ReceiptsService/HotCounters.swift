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
        ingestFrames = counters.handle("receiptd.frames.received", label: "ingest")
        subscribeFrames = counters.handle("receiptd.frames.received", label: "ingest_subscribe")
        queryFrames = counters.handle("receiptd.frames.received", label: "query")
        eventsAccepted = counters.handle("receiptd.events.accepted")
        eventsHeld = counters.handle("receiptd.events.held")
        eventsDuplicate = counters.handle("receiptd.events.duplicate")
        updatesPublished = counters.handle("receiptd.updates.published")
    }
}
