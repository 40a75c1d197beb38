package import ReceiptsWire
package import ZeroMQ

/// A bound PUB socket takes updates as two-frame messages.
extension ZMQSocket: UpdateSink {
    package func publish(topic: [UInt8], update: PublishedUpdate) {
        // PUB never blocks: past the high-water mark libzmq drops, and the sequence gap tells subscribers.
        _ = try? topic.withUnsafeBytes { topic in
            try update.encode().withUnsafeBytes { update in
                if try send(frame: topic, more: true, dontWait: true) {
                    _ = try send(frame: update, more: false, dontWait: true)
                }
            }
        }
    }
}
