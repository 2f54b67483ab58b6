import Foundation

/// The `--scaling` results as an SVG file with two log–log panels: time
/// (one `set`, its floor, open, delivery) and memory (the open store beside
/// its file), both against the number of keys. Plain SVG, no dependencies.
struct ScalingChart {
    let points: [Scaling.Point]
    let subscriberCounts: [Int]

    struct Series {
        var name: String
        var color: String
        var dashed = false
        var values: [(x: Double, y: Double)]
    }

    struct Panel {
        var title: String
        var yLabel: String
        var unit: Double
        var format: (Double) -> String
        var series: [Series]
    }

    static let width = 1000.0
    static let height = 500.0

    func svg() -> String {
        let keys = points.map { Double($0.keys) }
        func line(
            _ name: String, _ color: String, dashed: Bool = false, _ y: (Scaling.Point) -> Double
        )
            -> Series
        {
            Series(
                name: name, color: color, dashed: dashed,
                values: zip(keys, points.map(y)).map { (x: $0, y: $1) })
        }
        let deliveryColors = ["#9467bd", "#8c564b", "#e377c2"]
        let time = Panel(
            title: "Time", yLabel: "milliseconds (log)", unit: 1_000_000,
            format: Self.number,
            series: [
                line("one durable set", "#d62728") { $0.setNanoseconds },
                line("floor: durable replace of the same bytes", "#d62728", dashed: true) {
                    $0.floorNanoseconds
                },
                line("open", "#1f77b4") { $0.openNanoseconds },
            ]
                + subscriberCounts.enumerated().map { position, count in
                    line(
                        "changes() delivery to \(count.formatted()) subscriber\(count == 1 ? "" : "s")",
                        deliveryColors[position % deliveryColors.count]
                    ) { $0.deliveryNanoseconds[count] ?? .nan }
                })
        let memory = Panel(
            title: "Memory", yLabel: "KiB (log)", unit: 1024, format: Self.number,
            series: [
                line("memory of the open store", "#2ca02c") { $0.memoryBytes },
                line("file size", "#2ca02c", dashed: true) { $0.fileBytes },
            ])
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(Self.height))" \
            viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Self.width / 2)" y="22" text-anchor="middle" font-size="15" font-weight="bold">\
            Preferences: cost against the number of keys (log–log)</text>

            """
        out += render(time, left: 70, top: 50, width: 520, height: 280)
        out += render(memory, left: 680, top: 50, width: 280, height: 280)
        out += "</svg>\n"
        return out
    }

    /// One panel: frame, decade grid and labels, lines with markers, legend below.
    func render(_ panel: Panel, left: Double, top: Double, width: Double, height: Double)
        -> String
    {
        let xs = points.map { Double($0.keys) }
        let ys = panel.series.flatMap { $0.values.map { $0.y / panel.unit } }
            .filter { $0.isFinite && $0 > 0 }
        let xRange = (floor(log10(xs.min() ?? 10)), ceil(log10(xs.max() ?? 100_000)))
        var yRange = (floor(log10(ys.min() ?? 0.01)), ceil(log10(ys.max() ?? 1)))
        if yRange.0 == yRange.1 { yRange.1 += 1 }
        func px(_ x: Double) -> Double {
            left + (log10(x) - xRange.0) / (xRange.1 - xRange.0) * width
        }
        func py(_ y: Double) -> Double {
            top + height - (log10(y) - yRange.0) / (yRange.1 - yRange.0) * height
        }
        var out = "<g>\n"
        out += """
            <text x="\(left + width / 2)" y="\(top - 8)" text-anchor="middle" font-size="13" font-weight="bold">\(panel.title)</text>
            <rect x="\(left)" y="\(top)" width="\(width)" height="\(height)" fill="none" stroke="#333"/>

            """
        for decade in stride(from: xRange.0, through: xRange.1, by: 1) {
            let x = px(pow(10, decade))
            out += """
                <line x1="\(x)" y1="\(top)" x2="\(x)" y2="\(top + height)" stroke="#ddd"/>
                <text x="\(x)" y="\(top + height + 16)" text-anchor="middle">\(Self.number(pow(10, decade)))</text>

                """
        }
        for decade in stride(from: yRange.0, through: yRange.1, by: 1) {
            let y = py(pow(10, decade))
            out += """
                <line x1="\(left)" y1="\(y)" x2="\(left + width)" y2="\(y)" stroke="#ddd"/>
                <text x="\(left - 6)" y="\(y + 4)" text-anchor="end">\(panel.format(pow(10, decade)))</text>

                """
        }
        out += """
            <text x="\(left + width / 2)" y="\(top + height + 36)" text-anchor="middle">keys in the store (log)</text>
            <text x="\(left - 50)" y="\(top + height / 2)" text-anchor="middle" \
            transform="rotate(-90 \(left - 50) \(top + height / 2))">\(panel.yLabel)</text>

            """
        for series in panel.series {
            let visible = series.values.filter { $0.y.isFinite && $0.y > 0 }
            let path = visible.map { "\(px($0.x)),\(py($0.y / panel.unit))" }
                .joined(separator: " ")
            let dash = series.dashed ? " stroke-dasharray=\"6 4\"" : ""
            out +=
                "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(series.color)\" stroke-width=\"2\"\(dash)/>\n"
            for point in visible {
                out +=
                    "<circle cx=\"\(px(point.x))\" cy=\"\(py(point.y / panel.unit))\" r=\"3\" fill=\"\(series.color)\"/>\n"
            }
        }
        // Legend under the panel, one entry a line.
        for (position, series) in panel.series.enumerated() {
            let y = top + height + 58 + Double(position) * 16
            let dash = series.dashed ? " stroke-dasharray=\"6 4\"" : ""
            out += """
                <line x1="\(left)" y1="\(y - 4)" x2="\(left + 28)" y2="\(y - 4)" stroke="\(series.color)" stroke-width="2"\(dash)/>
                <text x="\(left + 36)" y="\(y)">\(Self.escape(series.name))</text>

                """
        }
        return out + "</g>\n"
    }

    /// 0.01, 0.1, 1, 10, 100, 1k, 10k, 100k, 1M.
    static func number(_ value: Double) -> String {
        if value >= 1_000_000 { return String(format: "%gM", value / 1_000_000) }
        if value >= 1_000 { return String(format: "%gk", value / 1_000) }
        return String(format: "%g", value)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
            of: "<", with: "&lt;")
    }
}
