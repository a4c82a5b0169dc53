//! Draws a Chrome trace-event timeline (the `--trace` output, or any file in
//! that format) as an SVG picture: one row per track (a task or a worker),
//! one bar per span, coloured by the span's name, with a time axis and a
//! legend. `weft trace FILE.json -o timeline.svg` calls [`render_file`].
//!
//! Input: either `{"traceEvents": [...]}` or a bare array of events. Complete
//! events (`ph: "X"` with `ts` and `dur` in microseconds) and begin/end pairs
//! (`ph: "B"`/`"E"` on the same `pid`/`tid`, nested) become spans; metadata
//! events (`ph: "M"`, `name: "thread_name"`) name the rows. Other events are
//! ignored. Rows are ordered by `(pid, tid)`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// Why a trace could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum TraceSvgError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a trace-event JSON file: {msg}")]
    Format { path: String, msg: String },
    #[error("{path}: the trace holds no spans to draw")]
    Empty { path: String },
}

/// One bar of the picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub name: String,
    /// Start, in microseconds.
    pub start: f64,
    /// Duration, in microseconds.
    pub dur: f64,
}

/// A row of the picture: a task or a worker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Track {
    pub label: String,
    pub spans: Vec<Span>,
}

/// Reads the trace at `input` and writes the SVG picture to `output`.
pub fn render_file(input: &Path, output: &Path) -> Result<(), TraceSvgError> {
    let shown = input.display().to_string();
    let text = std::fs::read_to_string(input).map_err(|source| TraceSvgError::Read {
        path: shown.clone(),
        source,
    })?;
    let tracks = parse(&text).map_err(|msg| TraceSvgError::Format {
        path: shown.clone(),
        msg,
    })?;
    if tracks.iter().all(|t| t.spans.is_empty()) {
        return Err(TraceSvgError::Empty { path: shown });
    }
    let svg = render(&tracks, &format!("weft trace: {shown}"));
    std::fs::write(output, svg).map_err(|source| TraceSvgError::Write {
        path: output.display().to_string(),
        source,
    })
}

/// Parses trace-event JSON into tracks ordered by `(pid, tid)`.
pub fn parse(text: &str) -> Result<Vec<Track>, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let events = match &root {
        Value::Array(a) => a,
        Value::Object(o) => match o.get("traceEvents") {
            Some(Value::Array(a)) => a,
            _ => return Err("expected a \"traceEvents\" array".into()),
        },
        _ => return Err("expected an object or an array of events".into()),
    };
    let mut tracks: BTreeMap<(i64, i64), Track> = BTreeMap::new();
    let mut open: BTreeMap<(i64, i64), Vec<(String, f64)>> = BTreeMap::new();
    for ev in events {
        let Some(ev) = ev.as_object() else { continue };
        let key = (int_field(ev.get("pid")), int_field(ev.get("tid")));
        let name = ev
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ts = ev.get("ts").and_then(Value::as_f64);
        match ev.get("ph").and_then(Value::as_str) {
            Some("X") => {
                let (Some(start), Some(dur)) = (ts, ev.get("dur").and_then(Value::as_f64)) else {
                    continue;
                };
                tracks.entry(key).or_default().spans.push(Span {
                    name,
                    start,
                    dur: dur.max(0.0),
                });
            }
            Some("B") => {
                if let Some(start) = ts {
                    open.entry(key).or_default().push((name, start));
                }
            }
            Some("E") => {
                let (Some(end), Some((name, start))) = (ts, open.get_mut(&key).and_then(Vec::pop))
                else {
                    continue;
                };
                tracks.entry(key).or_default().spans.push(Span {
                    name,
                    start,
                    dur: (end - start).max(0.0),
                });
            }
            Some("M") if name == "thread_name" => {
                if let Some(label) = ev
                    .get("args")
                    .and_then(|a| a.get("name"))
                    .and_then(Value::as_str)
                {
                    tracks.entry(key).or_default().label = label.to_string();
                }
            }
            _ => {}
        }
    }
    Ok(tracks
        .into_iter()
        .filter(|(_, t)| !t.spans.is_empty())
        .map(|((pid, tid), mut t)| {
            if t.label.is_empty() {
                t.label = format!("{pid}/{tid}");
            }
            t.spans
                .sort_by(|a, b| a.start.total_cmp(&b.start).then(b.dur.total_cmp(&a.dur)));
            t
        })
        .collect())
}

fn int_field(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

const ROW_H: f64 = 18.0;
const LABEL_W: f64 = 150.0;
const PLOT_W: f64 = 1000.0;
const TOP: f64 = 40.0;
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Renders tracks as a standalone SVG document.
pub fn render(tracks: &[Track], title: &str) -> String {
    let t0 = tracks
        .iter()
        .flat_map(|t| t.spans.iter().map(|s| s.start))
        .fold(f64::INFINITY, f64::min);
    let t1 = tracks
        .iter()
        .flat_map(|t| t.spans.iter().map(|s| s.start + s.dur))
        .fold(f64::NEG_INFINITY, f64::max);
    let (t0, span) = if t0.is_finite() && t1 > t0 {
        (t0, t1 - t0)
    } else {
        (0.0, 1.0)
    };
    let x = |t: f64| LABEL_W + (t - t0) / span * PLOT_W;

    // Colours by span name, in order of first appearance.
    let mut colours: Vec<String> = Vec::new();
    for s in tracks.iter().flat_map(|t| &t.spans) {
        if !colours.contains(&s.name) {
            colours.push(s.name.clone());
        }
    }
    let colour = |name: &str| {
        let i = colours.iter().position(|c| c == name).unwrap_or(0);
        PALETTE[i % PALETTE.len()]
    };

    let legend_rows = colours.len().div_ceil(5) as f64;
    let plot_h = tracks.len() as f64 * ROW_H;
    let height = TOP + plot_h + 30.0 + legend_rows * 18.0 + 10.0;
    let width = LABEL_W + PLOT_W + 20.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="8" y="16" font-size="13" font-weight="bold">{}</text>"#,
        escape(title)
    );
    // Time axis: five ticks.
    for i in 0..=5 {
        let t = t0 + span * i as f64 / 5.0;
        let xi = x(t);
        let _ = writeln!(
            out,
            r##"<line x1="{xi:.1}" y1="{TOP}" x2="{xi:.1}" y2="{:.1}" stroke="#ddd"/><text x="{xi:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP - 6.0,
            fmt_us(t - t0)
        );
    }
    for (row, track) in tracks.iter().enumerate() {
        let y = TOP + row as f64 * ROW_H;
        let _ = writeln!(
            out,
            r#"<text x="8" y="{:.1}">{}</text>"#,
            y + ROW_H * 0.7,
            escape(&track.label)
        );
        for s in &track.spans {
            let w = (s.dur / span * PLOT_W).max(0.5);
            let _ = writeln!(
                out,
                r#"<rect x="{:.2}" y="{:.1}" width="{w:.2}" height="{:.1}" fill="{}"><title>{} {}</title></rect>"#,
                x(s.start),
                y + 2.0,
                ROW_H - 4.0,
                colour(&s.name),
                escape(&s.name),
                fmt_us(s.dur)
            );
        }
    }
    let ly = TOP + plot_h + 24.0;
    for (i, name) in colours.iter().enumerate() {
        let lx = LABEL_W + (i % 5) as f64 * 200.0;
        let y = ly + (i / 5) as f64 * 18.0;
        let _ = writeln!(
            out,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}">{}</text>"#,
            y - 10.0,
            colour(name),
            lx + 16.0,
            y,
            escape(name)
        );
    }
    out.push_str("</svg>\n");
    out
}

fn fmt_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_and_begin_end_events_become_spans() {
        let text = r#"{"traceEvents":[
            {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"task 2"}},
            {"ph":"X","name":"run","pid":1,"tid":2,"ts":10,"dur":5},
            {"ph":"B","name":"wait","pid":1,"tid":3,"ts":12},
            {"ph":"E","pid":1,"tid":3,"ts":20},
            {"ph":"i","name":"ignored","pid":1,"tid":3,"ts":21}
        ]}"#;
        let tracks = parse(text).unwrap();
        assert_eq!(tracks.len(), 2);
        assert_eq!(tracks[0].label, "task 2");
        assert_eq!(
            tracks[0].spans,
            vec![Span {
                name: "run".into(),
                start: 10.0,
                dur: 5.0
            }]
        );
        assert_eq!(tracks[1].label, "1/3");
        assert_eq!(tracks[1].spans[0].name, "wait");
        assert_eq!(tracks[1].spans[0].dur, 8.0);
    }

    #[test]
    fn bare_arrays_are_accepted_and_bad_json_is_an_error() {
        let tracks = parse(r#"[{"ph":"X","name":"a","tid":1,"ts":0,"dur":1}]"#).unwrap();
        assert_eq!(tracks.len(), 1);
        assert!(parse("{").is_err());
        assert!(parse(r#"{"traceEvents": 3}"#).is_err());
        assert!(parse("42").is_err());
    }

    #[test]
    fn render_draws_one_bar_per_span_with_escaped_names() {
        let tracks = vec![Track {
            label: "<w>".into(),
            spans: vec![
                Span {
                    name: "a&b".into(),
                    start: 0.0,
                    dur: 1000.0,
                },
                Span {
                    name: "c".into(),
                    start: 1000.0,
                    dur: 500.0,
                },
            ],
        }];
        let svg = render(&tracks, "t");
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<title>").count(), 2);
        assert!(svg.contains("a&amp;b"));
        assert!(svg.contains("&lt;w&gt;"));
    }
}
