import Foundation

/// The one table `bench` prints: measure | receiptd | baseline | ratio | target.
struct ResultTable {
    struct Row {
        var measure: String
        var ours: String
        var baseline: String
        var ratio: String
        var target: String
    }

    private(set) var rows: [Row] = []
    private(set) var notes: [String] = []

    mutating func add(
        _ measure: String,
        ours: String,
        baseline: String = "—",
        ratio: String = "—",
        target: String = "—"
    ) {
        rows.append(Row(measure: measure, ours: ours, baseline: baseline, ratio: ratio, target: target))
        // Rows appear as they are measured, so a long run shows progress and a crash keeps them.
        FileHandle.standardError.write(Data("  \(measure): \(ours) | \(baseline) | \(ratio) | \(target)\n".utf8))
    }

    mutating func note(_ text: String) {
        notes.append(text)
    }

    /// The table as Markdown (it reads fine in a terminal too), then the notes.
    func render() -> String {
        let header = Row(measure: "measure", ours: "receiptd", baseline: "baseline", ratio: "ratio", target: "target")
        let all = [header] + rows
        let columns: [(Row) -> String] = [\.measure, \.ours, \.baseline, \.ratio, \.target]
        let widths: [Int] = columns.map { column in all.map { column($0).count }.max() ?? 0 }
        func line(_ row: Row) -> String {
            let cells = [row.measure, row.ours, row.baseline, row.ratio, row.target]
            let padded: [String] = zip(cells, widths).map { cell, width in
                cell.padding(toLength: width, withPad: " ", startingAt: 0)
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule: [String] = widths.map { String(repeating: "-", count: $0 + 2) }
        var text: [String] = [line(header), "|" + rule.joined(separator: "|") + "|"]
        text += rows.map(line)
        if !notes.isEmpty {
            text.append("")
            text.append("Notes:")
            text += notes.map { "- \($0)" }
        }
        return text.joined(separator: "\n")
    }

    // MARK: - Formatting

    static func rate(_ value: Double, _ unit: String = "events/s") -> String {
        if value >= 10_000_000 { return String(format: "%.1fM %@", value / 1e6, unit) }
        if value >= 1_000_000 { return String(format: "%.2fM %@", value / 1e6, unit) }
        if value >= 10_000 { return String(format: "%.0fk %@", value / 1e3, unit) }
        if value >= 1000 { return String(format: "%.1fk %@", value / 1e3, unit) }
        return String(format: "%.0f %@", value, unit)
    }

    static func ratio(_ ours: Double, _ baseline: Double) -> String {
        guard baseline > 0 else { return "—" }
        let value = ours / baseline
        return value >= 10 ? String(format: "%.0fx", value) : String(format: "%.2fx", value)
    }

    static func microseconds(_ value: Double?) -> String {
        guard let value else { return "n/a" }
        return value >= 1000 ? String(format: "%.2f ms", value / 1000) : String(format: "%.0f µs", value)
    }

    static func bytes(_ value: Double) -> String {
        if value >= 1e9 { return String(format: "%.2f GB", value / 1e9) }
        if value >= 1e6 { return String(format: "%.1f MB", value / 1e6) }
        if value >= 1e3 { return String(format: "%.1f kB", value / 1e3) }
        return String(format: "%.0f B", value)
    }

    static func seconds(_ value: Double) -> String {
        value >= 1 ? String(format: "%.2f s", value) : String(format: "%.0f ms", value * 1000)
    }

    /// The median of repeated measurements (the lower middle for an even count).
    static func median(_ values: [Double]) -> Double {
        percentile(values, 50)
    }

    /// The value `percent` of the way up the sorted values (the lower one between two), 0 for none.
    static func percentile(_ values: [Double], _ percent: Int) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[(sorted.count - 1) * percent / 100]
    }
}
