extension ReceiptLog {
    /// Bytes of the segment and snapshot files the log currently keeps, for disk-growth alerts.
    ///
    /// Each file is measured with `stat`; a file removed by a compaction in between counts as 0.
    public var bytesOnDisk: UInt64 {
        let (segments, snapshots) = writer.state.withLock { ($0.segments, $0.snapshots) }
        let names =
            segments.map { LogFileName.segment(start: $0) } + snapshots.map { LogFileName.snapshot(position: $0) }
        return names.reduce(0) { total, name in
            total + ((try? FileIO.size(ofFile: "\(writer.directory)/\(name)")) ?? 0)
        }
    }
}
