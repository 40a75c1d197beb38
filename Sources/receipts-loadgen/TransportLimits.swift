/// The two transport limits an ingest row of `bench` is compared with, in events per second,
/// measured on the same frames in the same invocation.
struct TransportLimits {
    /// PUSH → PULL + protobuf-c unpack, nothing sent back (`RawTransportBaseline`).
    var receiveOnly: Double
    /// DEALER → ROUTER + decode + one update per event + one reply per frame (`WireLimitBaseline`).
    var wire: Double
}
