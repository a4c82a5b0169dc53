//! Draws a Chrome trace-event timeline (the `--trace` output, or any file in
//! that format) as an SVG picture: one row per track (a task or a worker),
//! bars coloured by span name, with a time axis and a legend.
//! `weft trace FILE.json -o timeline.svg` calls [`render_file`].
//!
//! Input: either `{"traceEvents": [...]}` or a bare array of events. Complete
//! events (`ph: "X"` with `ts` and `dur` in microseconds) and begin/end pairs
//! (`ph: "B"`/`"E"` on the same `pid`/`tid`, nested) become spans; metadata
//! events (`ph: "M"`, `name: "thread_name"`) name the rows, and an
//! `args.device` there (Weft's tracks say the device their task runs on,
//! docs/language.md, "Placement") groups them. Other events are ignored.
//! Rows are ordered by `pid`, then by device (devices in the order of
//! their first track), then by `tid`; each device's group of a process
//! starts with a header row naming the device.
//!
//! Reading: the file is parsed as a stream of events (serde, strings
//! borrowed from the file's bytes), each kept as 24 bytes (start, duration,
//! an interned name), never as a JSON tree.
//!
//! Drawing, and why its size is bounded whatever the trace:
//! - Within a row, spans overlap (an op inside a poll); what shows is the
//!   span drawn last, the latest to start. Each row is first flattened into
//!   the disjoint pieces that would show ([`flatten`]).
//! - A piece at least a pixel wide is a bar, labelled with its name when the
//!   name fits. Pieces narrower than a pixel are gathered per pixel column:
//!   the column shows the name that covers most of its time, fainter when
//!   the pieces cover less of it. Adjacent columns alike merge into one bar.
//!   So a row holds at most about two elements per pixel column.
//! - With more tracks than [`MAX_ROWS`], consecutive tracks of a process
//!   share a row (processes with few tracks, the workers, keep theirs),
//!   drawn per pixel column the same way.
//! - Colours: Weft's own spans (`run`, `runnable`, each `wait:` kind) have
//!   fixed colours; other names take, by total time, a colour of a 13-hue
//!   palette, then the same hues striped, dotted and cross-hatched. No two
//!   legend entries look alike; names past the 52 styles share an "other"
//!   entry that says how many names it stands for. Names "NAME #N" (the
//!   spans of a worker's track, named after the task polled) share an
//!   entry "NAME #A…#B" per NAME ([`legend`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::path::Path;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

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

/// One bar of a track: times in microseconds, the name an index into
/// [`Trace::names`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    pub start: f64,
    pub dur: f64,
    pub name: u32,
}

/// A track: a task or a worker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Track {
    pub pid: i64,
    pub tid: i64,
    pub label: String,
    /// The device the track's task runs on, when the trace says.
    pub device: Option<String>,
    /// By start, the longer first among equal starts (drawing order).
    pub spans: Vec<Span>,
}

/// A parsed trace: the tracks that hold spans, by `(pid, tid)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Span names, in order of first appearance.
    pub names: Vec<String>,
    pub tracks: Vec<Track>,
}

/// Reads the trace at `input` and writes the SVG picture to `output`.
pub fn render_file(input: &Path, output: &Path) -> Result<(), TraceSvgError> {
    let shown = input.display().to_string();
    let bytes = std::fs::read(input).map_err(|source| TraceSvgError::Read {
        path: shown.clone(),
        source,
    })?;
    let trace = parse(&bytes).map_err(|msg| TraceSvgError::Format {
        path: shown.clone(),
        msg,
    })?;
    drop(bytes);
    if trace.tracks.is_empty() {
        return Err(TraceSvgError::Empty { path: shown });
    }
    let svg = render(&trace, &format!("weft trace: {shown}"));
    std::fs::write(output, svg).map_err(|source| TraceSvgError::Write {
        path: output.display().to_string(),
        source,
    })
}

// ---- reading ----

/// Parses trace-event JSON.
pub fn parse(bytes: &[u8]) -> Result<Trace, String> {
    let mut b = Builder::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    RootSeed(&mut b)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| e.to_string())?;
    Ok(b.finish())
}

#[derive(Default)]
struct Builder {
    index: HashMap<String, u32>,
    names: Vec<String>,
    tracks: HashMap<(i64, i64), TrackBuild>,
}

#[derive(Default)]
struct TrackBuild {
    label: Option<String>,
    device: Option<String>,
    spans: Vec<Span>,
    /// Open `B` events: (name, start).
    open: Vec<(u32, f64)>,
}

/// The fields of one event that matter here.
#[derive(Default)]
struct RawEvent<'de> {
    name: Option<Cow<'de, str>>,
    ph: Option<Cow<'de, str>>,
    pid: i64,
    tid: i64,
    ts: Option<f64>,
    dur: Option<f64>,
    /// `args.name` (a thread's name in a metadata event).
    label: Option<Cow<'de, str>>,
    /// `args.device` (a thread's device in a metadata event).
    device: Option<Cow<'de, str>>,
}

impl Builder {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }

    fn add(&mut self, ev: RawEvent<'_>) {
        let key = (ev.pid, ev.tid);
        let name = ev.name.as_deref().unwrap_or("");
        match ev.ph.as_deref() {
            Some("X") => {
                let (Some(start), Some(dur)) = (ev.ts, ev.dur) else {
                    return;
                };
                let name = self.intern(name);
                self.tracks.entry(key).or_default().spans.push(Span {
                    start,
                    dur: dur.max(0.0),
                    name,
                });
            }
            Some("B") => {
                if let Some(start) = ev.ts {
                    let name = self.intern(name);
                    self.tracks.entry(key).or_default().open.push((name, start));
                }
            }
            Some("E") => {
                let Some(t) = self.tracks.get_mut(&key) else {
                    return;
                };
                if let (Some(end), Some((name, start))) = (ev.ts, t.open.pop()) {
                    t.spans.push(Span {
                        start,
                        dur: (end - start).max(0.0),
                        name,
                    });
                }
            }
            Some("M") if name == "thread_name" => {
                let t = self.tracks.entry(key).or_default();
                if let Some(label) = ev.label {
                    t.label = Some(label.into_owned());
                }
                if let Some(device) = ev.device {
                    t.device = Some(device.into_owned());
                }
            }
            _ => {}
        }
    }

    fn finish(self) -> Trace {
        let mut tracks: Vec<Track> = self
            .tracks
            .into_iter()
            .filter(|(_, t)| !t.spans.is_empty())
            .map(|((pid, tid), t)| {
                let mut spans = t.spans;
                spans.sort_by(|a, b| a.start.total_cmp(&b.start).then(b.dur.total_cmp(&a.dur)));
                Track {
                    pid,
                    tid,
                    label: t.label.unwrap_or_else(|| format!("{pid}/{tid}")),
                    device: t.device,
                    spans,
                }
            })
            .collect();
        // A device's group sorts at its first track's number.
        let mut first: HashMap<(i64, Option<String>), i64> = HashMap::new();
        for t in &tracks {
            let f = first.entry((t.pid, t.device.clone())).or_insert(t.tid);
            *f = (*f).min(t.tid);
        }
        tracks.sort_by_cached_key(|t| (t.pid, first[&(t.pid, t.device.clone())], t.tid));
        Trace {
            names: self.names,
            tracks,
        }
    }
}

/// The document: an object with `traceEvents`, or a bare array.
struct RootSeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for RootSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RootSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object or an array of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        EventsSeed(self.0).visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<Str<'de>>()? {
            if key.0 == "traceEvents" {
                map.next_value_seed(EventsSeed(&mut *self.0))?;
                found = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if found {
            Ok(())
        } else {
            Err(de::Error::custom("expected a \"traceEvents\" array"))
        }
    }
}

/// The array of events, each handed to the builder as it is read.
struct EventsSeed<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a \"traceEvents\" array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(ev) = seq.next_element::<Event<'de>>()? {
            if let Some(ev) = ev.0 {
                self.0.add(ev);
            }
        }
        Ok(())
    }
}

/// One element of the array; `None` when it is not an object.
struct Event<'de>(Option<RawEvent<'de>>);

impl<'de> de::Deserialize<'de> for Event<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an event")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<'de>, A::Error> {
        let mut ev = RawEvent::default();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "name" => ev.name = map.next_value::<Loose<'de>>()?.string(),
                "ph" => ev.ph = map.next_value::<Loose<'de>>()?.string(),
                "pid" => ev.pid = map.next_value::<Loose<'de>>()?.int(),
                "tid" => ev.tid = map.next_value::<Loose<'de>>()?.int(),
                "ts" => ev.ts = map.next_value::<Loose<'de>>()?.number(),
                "dur" => ev.dur = map.next_value::<Loose<'de>>()?.number(),
                "args" => {
                    let a = map.next_value::<Args<'de>>()?;
                    (ev.label, ev.device) = (a.name, a.device);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Event(Some(ev)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Event<'de>, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Event(None))
    }
    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
    fn visit_str<E>(self, _: &str) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
    fn visit_unit<E>(self) -> Result<Event<'de>, E> {
        Ok(Event(None))
    }
}

/// A string, borrowed from the input when it has no escapes.
struct Str<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StrVisitor)
    }
}

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Str<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Str<'de>, E> {
        Ok(Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Str<'de>, E> {
        Ok(Str(Cow::Owned(s.to_string())))
    }
}

/// A field's value whatever its type: a string, a number, or anything else
/// (skipped).
enum Loose<'de> {
    Str(Cow<'de, str>),
    Num(f64),
    Other,
}

impl<'de> Loose<'de> {
    fn string(self) -> Option<Cow<'de, str>> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }
    fn number(self) -> Option<f64> {
        match self {
            Loose::Num(n) => Some(n),
            Loose::Str(s) => s.trim().parse().ok(),
            Loose::Other => None,
        }
    }
    fn int(self) -> i64 {
        self.number().map_or(0, |n| n as i64)
    }
}

impl<'de> de::Deserialize<'de> for Loose<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Loose<'de>, E> {
        Ok(Loose::Str(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Loose<'de>, E> {
        Ok(Loose::Str(Cow::Owned(s.to_string())))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Loose<'de>, E> {
        Ok(Loose::Num(n as f64))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Loose<'de>, E> {
        Ok(Loose::Num(n as f64))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Loose<'de>, E> {
        Ok(Loose::Num(n))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Loose<'de>, E> {
        Ok(Loose::Other)
    }
    fn visit_unit<E>(self) -> Result<Loose<'de>, E> {
        Ok(Loose::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Loose<'de>, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Loose::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Loose<'de>, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Loose::Other)
    }
}

/// An event's `args`, of which only the strings `name` and `device` are
/// kept.
#[derive(Default)]
struct Args<'de> {
    name: Option<Cow<'de, str>>,
    device: Option<Cow<'de, str>>,
}

impl<'de> de::Deserialize<'de> for Args<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ArgsVisitor)
    }
}

/// A map yields its `name` and `device` strings; anything else, nothing.
struct ArgsVisitor;

impl<'de> Visitor<'de> for ArgsVisitor {
    type Value = Args<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Args<'de>, A::Error> {
        let mut args = Args::default();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            match &*key.0 {
                "name" => args.name = map.next_value::<Loose<'de>>()?.string(),
                "device" => args.device = map.next_value::<Loose<'de>>()?.string(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(args)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Args<'de>, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Args::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Args<'de>, E> {
        Ok(Args::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Args<'de>, E> {
        Ok(Args::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Args<'de>, E> {
        Ok(Args::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Args<'de>, E> {
        Ok(Args::default())
    }
    fn visit_bool<E>(self, _: bool) -> Result<Args<'de>, E> {
        Ok(Args::default())
    }
    fn visit_unit<E>(self) -> Result<Args<'de>, E> {
        Ok(Args::default())
    }
}

// ---- styles ----

/// How a bar is filled: a colour, plain or with a white pattern over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    Solid,
    Stripes,
    Dots,
    Cross,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Style {
    pub colour: &'static str,
    pub pattern: Pattern,
}

/// Weft's own span names and their fixed colours.
const FIXED: [(&str, &str); 7] = [
    ("run", "#4e79a7"),
    ("runnable", "#f1ce63"),
    ("wait: chan receive", "#e15759"),
    ("wait: chan send", "#f28e2b"),
    ("wait: select", "#b07aa1"),
    ("wait: sleep", "#bab0ac"),
    ("wait: nil chan", "#79706e"),
];

/// The other names' hues, the most distinct first (Tableau 20 less the
/// fixed colours).
const GENERAL: [&str; 13] = [
    "#59a14f", "#9d7660", "#499894", "#d37295", "#a0cbe8", "#ffbe7d", "#b6992d", "#8cd17d",
    "#ff9da7", "#86bcb6", "#d4a6c8", "#fabfd2", "#d7b5a6",
];
const PATTERNS: [Pattern; 4] = [
    Pattern::Solid,
    Pattern::Stripes,
    Pattern::Dots,
    Pattern::Cross,
];
/// Names past the general styles.
const OTHER: Style = Style {
    colour: "#cfcfcf",
    pattern: Pattern::Cross,
};

/// One legend entry: a name (or "other") and its style.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub label: String,
    pub style: Style,
}

/// The legend, and the entry of every name (by name index).
#[derive(Debug, Clone, PartialEq)]
pub struct Legend {
    pub entries: Vec<Entry>,
    pub of_name: Vec<usize>,
}

/// Splits "NAME #N" (a task's track name, which Weft also gives the spans
/// of a worker's track) into NAME and N.
fn numbered(name: &str) -> Option<(&str, u64)> {
    let (base, n) = name.rsplit_once(" #")?;
    Some((base, n.parse().ok()?))
}

/// Assigns styles. Names "NAME #N" alike share one entry ("NAME #A…#B"):
/// the spans of a worker's track are named after the task polled, and a
/// colour per task would say nothing past a few tasks. Weft's own names get
/// their fixed colours; the other entries, by total time (ties by first
/// appearance), the general styles, so the same trace always gets the same
/// colours; past the 52 general styles, entries fold into "other".
pub fn legend(trace: &Trace) -> Legend {
    // Entry keys, in order of first appearance: (key, total, numbers).
    type Key = (String, f64, Option<(u64, u64)>);
    let mut keys: Vec<Key> = Vec::new();
    let mut key_index: HashMap<&str, usize> = HashMap::new();
    let mut key_of = Vec::with_capacity(trace.names.len());
    for name in &trace.names {
        let fixed = FIXED.iter().any(|(n, _)| n == name);
        let (key, n) = match numbered(name).filter(|_| !fixed) {
            Some((base, n)) => (base, Some(n)),
            None => (name.as_str(), None),
        };
        let k = *key_index.entry(key).or_insert_with(|| {
            keys.push((key.to_string(), 0.0, None));
            keys.len() - 1
        });
        if let Some(n) = n {
            let range = &mut keys[k].2;
            *range = Some(range.map_or((n, n), |(a, b)| (a.min(n), b.max(n))));
        }
        key_of.push(k);
    }
    for s in trace.tracks.iter().flat_map(|t| &t.spans) {
        keys[key_of[s.name as usize]].1 += s.dur;
    }
    let label = |k: usize| match &keys[k] {
        (base, _, Some((a, b))) if a == b => format!("{base} #{a}"),
        (base, _, Some((a, b))) => format!("{base} #{a}…#{b}"),
        (name, _, None) => name.clone(),
    };
    let mut fixed = Vec::new();
    let mut rest = Vec::new();
    for (k, (key, _, range)) in keys.iter().enumerate() {
        match FIXED
            .iter()
            .position(|(n, _)| n == key)
            .filter(|_| range.is_none())
        {
            Some(f) => fixed.push((f, k)),
            None => rest.push(k),
        }
    }
    rest.sort_by(|&a, &b| keys[b].1.total_cmp(&keys[a].1).then(a.cmp(&b)));
    // Fixed entries in the order of FIXED, so the legend reads the same.
    fixed.sort_unstable();
    let mut entries = Vec::new();
    let mut of_key = vec![0; keys.len()];
    for (f, k) in fixed {
        of_key[k] = entries.len();
        entries.push(Entry {
            label: label(k),
            style: Style {
                colour: FIXED[f].1,
                pattern: Pattern::Solid,
            },
        });
    }
    let styles = PATTERNS.len() * GENERAL.len();
    let (named, folded) = if rest.len() <= styles {
        (&rest[..], &[][..])
    } else {
        rest.split_at(styles - 1)
    };
    for (i, &k) in named.iter().enumerate() {
        of_key[k] = entries.len();
        entries.push(Entry {
            label: label(k),
            style: Style {
                colour: GENERAL[i % GENERAL.len()],
                pattern: PATTERNS[i / GENERAL.len()],
            },
        });
    }
    if !folded.is_empty() {
        for &k in folded {
            of_key[k] = entries.len();
        }
        entries.push(Entry {
            label: format!("other ({} names)", folded.len()),
            style: OTHER,
        });
    }
    let of_name = key_of.iter().map(|&k| of_key[k]).collect();
    Legend { entries, of_name }
}

/// The SVG paint of style number `i`.
fn fill(styles: &[Style], i: usize) -> Cow<'static, str> {
    match styles[i].pattern {
        Pattern::Solid => Cow::Borrowed(styles[i].colour),
        _ => Cow::Owned(format!("url(#p{i})")),
    }
}

fn pattern_defs(out: &mut String, styles: &[Style]) {
    out.push_str("<defs>\n");
    for (i, s) in styles.iter().enumerate() {
        let over = match s.pattern {
            Pattern::Solid => continue,
            Pattern::Stripes => {
                r#"<line x1="0" y1="0" x2="0" y2="6" stroke="white" stroke-width="2.2"/>"#
            }
            Pattern::Dots => r#"<circle cx="3" cy="3" r="1.4" fill="white"/>"#,
            Pattern::Cross => {
                r#"<line x1="0" y1="0" x2="0" y2="6" stroke="white" stroke-width="1.2"/><line x1="0" y1="3" x2="6" y2="3" stroke="white" stroke-width="1.2"/>"#
            }
        };
        let turn = if s.pattern == Pattern::Dots { 0 } else { 45 };
        let _ = writeln!(
            out,
            r#"<pattern id="p{i}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate({turn})"><rect width="6" height="6" fill="{}"/>{over}</pattern>"#,
            s.colour
        );
    }
    out.push_str("</defs>\n");
}

/// Dark text on light colours, white on dark ones.
fn ink(colour: &str) -> &'static str {
    let c = |i: usize| u8::from_str_radix(colour.get(i..i + 2).unwrap_or("80"), 16).unwrap_or(128);
    let luma = 0.299 * f64::from(c(1)) + 0.587 * f64::from(c(3)) + 0.114 * f64::from(c(5));
    if luma < 140.0 {
        "white"
    } else {
        "#222"
    }
}

// ---- flattening ----

/// A piece of a span that shows: `[start, end)` of span `span` of a track.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    pub start: f64,
    pub end: f64,
    pub span: usize,
}

/// The disjoint pieces that show when a track's spans are drawn in order
/// (by start, the longer first), each over the ones before: at any moment
/// the span that shows is the one, among those covering it, drawn last.
/// One pass with a stack of open spans, O(n).
pub fn flatten(spans: &[Span]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(spans.len());
    let mut stack: Vec<usize> = Vec::new();
    let mut now = f64::NEG_INFINITY;
    let end = |i: usize| spans[i].start + spans[i].dur;
    // Emits what shows from `now` up to `t`.
    let advance = |t: f64, now: &mut f64, stack: &mut Vec<usize>, out: &mut Vec<Piece>| {
        while let Some(&top) = stack.last() {
            let e = end(top);
            if e <= *now {
                stack.pop();
                continue;
            }
            let to = e.min(t);
            if to > *now {
                match out.last_mut() {
                    Some(p) if p.span == top && p.end == *now => p.end = to,
                    _ => out.push(Piece {
                        start: *now,
                        end: to,
                        span: top,
                    }),
                }
                *now = to;
            }
            if e <= t {
                stack.pop();
            } else {
                break;
            }
        }
        *now = now.max(t);
    };
    for (i, s) in spans.iter().enumerate() {
        advance(s.start, &mut now, &mut stack, &mut out);
        stack.push(i);
    }
    advance(f64::INFINITY, &mut now, &mut stack, &mut out);
    out
}

// ---- drawing ----

const ROW_H: f64 = 18.0;
const PLOT_W: f64 = 1000.0;
/// Pixel columns of the plot (one per pixel).
const COLS: usize = PLOT_W as usize;
const TOP: f64 = 40.0;
/// Rows at most; past it tracks share rows.
pub const MAX_ROWS: usize = 150;
/// A process with at most this many tracks keeps a row per track.
const FEW: usize = 8;
/// Character width estimate for the 10 px labels on bars.
const CHAR_W: f64 = 5.8;

/// A row of the picture: a run of consecutive tracks of one process on
/// one device, or (no tracks) the header of a device's group.
struct Row<'t> {
    label: String,
    tracks: &'t [Track],
}

impl Row<'_> {
    fn is_header(&self) -> bool {
        self.tracks.is_empty()
    }
}

/// Splits the tracks into rows: one per track up to [`MAX_ROWS`]; beyond,
/// processes with few tracks keep a row per track and the others share the
/// remaining rows in equal runs of consecutive tracks.
fn rows(tracks: &[Track]) -> Vec<Row<'_>> {
    // A "process" here is a run of tracks of one process on one device.
    let mut procs: Vec<&[Track]> = Vec::new();
    let mut rest = tracks;
    while let Some(first) = rest.first() {
        let n = rest
            .iter()
            .take_while(|t| t.pid == first.pid && t.device == first.device)
            .count();
        let (p, r) = rest.split_at(n);
        procs.push(p);
        rest = r;
    }
    let few: usize = procs
        .iter()
        .filter(|p| p.len() <= FEW)
        .map(|p| p.len())
        .sum();
    let keep_few = tracks.len() > MAX_ROWS && few <= MAX_ROWS / 2;
    let budget = MAX_ROWS - if keep_few { few } else { 0 };
    let shared: Vec<&&[Track]> = procs
        .iter()
        .filter(|p| !(keep_few && p.len() <= FEW))
        .collect();
    // The smallest run length that fits the budget.
    let rows_for = |g: usize| shared.iter().map(|p| p.len().div_ceil(g)).sum::<usize>();
    let mut g = 1;
    if tracks.len() > MAX_ROWS {
        let (mut lo, mut hi) = (1, tracks.len().max(1));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if rows_for(mid) <= budget.max(shared.len()) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        g = lo;
    }
    let mut out = Vec::new();
    for p in procs {
        if let Some(dev) = p.first().and_then(|t| t.device.as_deref()) {
            out.push(Row {
                label: format!("on {dev}"),
                tracks: &[],
            });
        }
        let run = if keep_few && p.len() <= FEW { 1 } else { g };
        for chunk in p.chunks(run) {
            out.push(Row {
                label: row_label(chunk),
                tracks: chunk,
            });
        }
    }
    out
}

/// A shared row's label: "NAME #A–#B (N tracks)" when the tracks' labels are
/// "NAME #N" alike, else "N tracks: FIRST … LAST".
fn row_label(tracks: &[Track]) -> String {
    let (Some(first), Some(last)) = (tracks.first(), tracks.last()) else {
        return String::new();
    };
    if tracks.len() == 1 {
        return first.label.clone();
    }
    let split = |l: &str| -> Option<(String, String)> {
        let (base, n) = l.rsplit_once(" #")?;
        n.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| (base.to_string(), n.to_string()))
    };
    let n = tracks.len();
    match (split(&first.label), split(&last.label)) {
        (Some((a, fa)), Some((b, lb)))
            if a == b
                && tracks
                    .iter()
                    .all(|t| split(&t.label).is_some_and(|(x, _)| x == a)) =>
        {
            format!("{a} #{fa}–#{lb} ({n} tracks)")
        }
        _ => format!("{n} tracks: {} … {}", first.label, last.label),
    }
}

/// Per pixel column, the time (in columns) each legend entry shows there.
struct Columns {
    entries: usize,
    /// `COLS × entries`, time per column and entry.
    acc: Vec<f64>,
    /// Difference array of whole columns covered, per entry.
    diff: Vec<f64>,
    used: bool,
}

impl Columns {
    fn new(entries: usize) -> Columns {
        Columns {
            entries,
            acc: vec![0.0; COLS * entries],
            diff: vec![0.0; (COLS + 1) * entries],
            used: false,
        }
    }

    /// Adds `[a, b)` (in columns, 0..COLS) to `entry`.
    fn add(&mut self, a: f64, b: f64, entry: usize) {
        let a = a.clamp(0.0, COLS as f64);
        let b = b.clamp(0.0, COLS as f64);
        if b <= a {
            if b == a && a < COLS as f64 {
                // Zero-length: still marks the column, faintly.
                let c = a as usize;
                self.acc[c * self.entries + entry] += 1e-6;
                self.used = true;
            }
            return;
        }
        self.used = true;
        let (ca, cb) = (a as usize, b as usize);
        if ca == cb {
            self.acc[ca * self.entries + entry] += b - a;
            return;
        }
        self.acc[ca * self.entries + entry] += (ca + 1) as f64 - a;
        if cb < COLS {
            self.acc[cb * self.entries + entry] += b - cb as f64;
        }
        if ca + 1 < cb {
            self.diff[(ca + 1) * self.entries + entry] += 1.0;
            self.diff[cb * self.entries + entry] -= 1.0;
        }
    }

    /// Per column: the entry that shows most and the share of the column's
    /// time covered (over `depth` tracks); then clears.
    fn take(&mut self, depth: usize) -> Vec<Option<(usize, f64)>> {
        let k = self.entries;
        let mut run = vec![0.0; k];
        let mut out = Vec::with_capacity(COLS);
        for c in 0..COLS {
            let mut best: Option<(usize, f64)> = None;
            let mut sum = 0.0;
            let row = c * k..(c + 1) * k;
            let cells = run
                .iter_mut()
                .zip(&self.diff[row.clone()])
                .zip(&self.acc[row]);
            for (e, ((r, d), a)) in cells.enumerate() {
                *r += d;
                let v = a + *r;
                if v > 0.0 {
                    sum += v;
                    if best.is_none_or(|(_, bv)| v > bv) {
                        best = Some((e, v));
                    }
                }
            }
            out.push(best.map(|(e, _)| (e, (sum / depth as f64).min(1.0))));
        }
        if self.used {
            self.acc.iter_mut().for_each(|v| *v = 0.0);
            self.diff.iter_mut().for_each(|v| *v = 0.0);
            self.used = false;
        }
        out
    }
}

/// Renders a trace as a standalone SVG document.
pub fn render(trace: &Trace, title: &str) -> String {
    let tracks = &trace.tracks;
    let t0 = tracks
        .iter()
        .flat_map(|t| t.spans.iter().map(|s| s.start))
        .fold(f64::INFINITY, f64::min);
    let t1 = tracks
        .iter()
        .flat_map(|t| t.spans.iter().map(|s| s.start + s.dur))
        .fold(f64::NEG_INFINITY, f64::max);
    let (t0, span) = match (t0.is_finite(), t1 > t0) {
        (true, true) => (t0, t1 - t0),
        (true, false) => (t0, 1.0),
        (false, _) => (0.0, 1.0),
    };
    // Time to columns (pixels of the plot).
    let col = |t: f64| (t - t0) / span * PLOT_W;

    let legend = legend(trace);
    let styles: Vec<Style> = legend.entries.iter().map(|e| e.style).collect();
    let rows = rows(tracks);
    let longest = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    let label_w = (longest as f64 * 6.3 + 16.0).clamp(120.0, 300.0);
    let label_chars = ((label_w - 16.0) / 6.3) as usize;
    let x = |c: f64| label_w + c;

    let legend_cols = 4;
    let legend_rows = legend.entries.len().div_ceil(legend_cols) as f64;
    let plot_h = rows.len() as f64 * ROW_H;
    let merged_rows = rows.iter().any(|r| r.tracks.len() > 1);
    // The plot first (whether pixels were merged decides the notes).
    let mut plot = String::with_capacity(64 * 1024);
    let mut merged_pixels = false;
    // Time axis: five ticks.
    for i in 0..=5 {
        let t = t0 + span * i as f64 / 5.0;
        let xi = x(col(t));
        let _ = writeln!(
            plot,
            r##"<line x1="{xi:.1}" y1="{TOP}" x2="{xi:.1}" y2="{:.1}" stroke="#ddd"/><text x="{xi:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + plot_h,
            TOP - 6.0,
            fmt_us(t - t0)
        );
    }

    let mut columns = Columns::new(styles.len().max(1));
    for (r, row) in rows.iter().enumerate() {
        let y = TOP + r as f64 * ROW_H;
        if row.is_header() {
            let _ = writeln!(
                plot,
                r##"<line x1="4" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#999"/><text x="4" y="{:.1}" font-weight="bold">{}</text>"##,
                x(PLOT_W),
                y + ROW_H * 0.7,
                escape(&truncate(&row.label, label_chars))
            );
            continue;
        }
        let shown = truncate(&row.label, label_chars);
        if shown.len() == row.label.len() {
            let _ = writeln!(
                plot,
                r#"<text x="8" y="{:.1}">{}</text>"#,
                y + ROW_H * 0.7,
                escape(&row.label)
            );
        } else {
            let _ = writeln!(
                plot,
                r#"<text x="8" y="{:.1}"><title>{}</title>{}</text>"#,
                y + ROW_H * 0.7,
                escape(&row.label),
                escape(&shown)
            );
        }
        let (by, bh) = (y + 2.0, ROW_H - 4.0);
        let single = row.tracks.len() == 1;
        let mut labels: Vec<(f64, f64, usize)> = Vec::new();
        for track in row.tracks {
            for p in flatten(&track.spans) {
                let s = &track.spans[p.span];
                let entry = legend.of_name[s.name as usize];
                let (a, b) = (col(p.start), col(p.end));
                if single && b - a >= 1.0 {
                    let name = &trace.names[s.name as usize];
                    let _ = writeln!(
                        plot,
                        r#"<rect x="{:.2}" y="{by:.1}" width="{:.2}" height="{bh:.1}" fill="{}"><title>{} {}</title></rect>"#,
                        x(a),
                        b - a,
                        fill(&styles, entry),
                        escape(name),
                        fmt_us(s.dur)
                    );
                    let text_w = name.chars().count() as f64 * CHAR_W + 6.0;
                    if b - a >= text_w {
                        labels.push((a, b - a, s.name as usize));
                    }
                } else {
                    columns.add(a, b, entry);
                }
            }
        }
        // Columns: the entry that shows most, fainter when less is covered;
        // alike neighbours merged.
        let cols = columns.take(row.tracks.len());
        let mut c = 0;
        while c < COLS {
            let Some((entry, share)) = cols[c] else {
                c += 1;
                continue;
            };
            let level = opacity(share);
            let mut d = c + 1;
            while d < COLS && cols[d].is_some_and(|(e, s)| e == entry && opacity(s) == level) {
                d += 1;
            }
            let what = if single {
                "spans narrower than a pixel"
            } else {
                "most of the time shown"
            };
            let _ = writeln!(
                plot,
                r#"<rect x="{:.2}" y="{by:.1}" width="{}" height="{bh:.1}" fill="{}" fill-opacity="{level:.1}"><title>{} ({what})</title></rect>"#,
                x(c as f64),
                d - c,
                fill(&styles, entry),
                escape(&legend.entries[entry].label),
            );
            merged_pixels |= single;
            c = d;
        }
        for (a, w, name) in labels {
            let entry = legend.of_name[name];
            let _ = writeln!(
                plot,
                r#"<text x="{:.2}" y="{:.1}" font-size="10" fill="{}">{}</text>"#,
                x(a) + 3.0,
                y + ROW_H * 0.68,
                ink(styles[entry].colour),
                escape(truncate(&trace.names[name], ((w - 6.0) / CHAR_W) as usize).as_ref())
            );
        }
    }

    let notes = f64::from(u8::from(merged_pixels)) + f64::from(u8::from(merged_rows));
    let height = TOP + plot_h + 30.0 + legend_rows * 18.0 + notes * 16.0 + 10.0;
    let width = label_w + PLOT_W + 20.0;
    let mut out = String::with_capacity(plot.len() + 16 * 1024);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" font-family="sans-serif" font-size="11">"#
    );
    pattern_defs(&mut out, &styles);
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="8" y="16" font-size="13" font-weight="bold">{}</text>"#,
        escape(title)
    );
    out.push_str(&plot);
    drop(plot);

    let ly = TOP + plot_h + 24.0;
    let col_w = (label_w + PLOT_W - 20.0) / legend_cols as f64;
    let key_chars = ((col_w - 24.0) / 6.3) as usize;
    for (i, e) in legend.entries.iter().enumerate() {
        let lx = 8.0 + (i % legend_cols) as f64 * col_w;
        let y = ly + (i / legend_cols) as f64 * 18.0;
        let _ = writeln!(
            out,
            r##"<rect class="key" x="{lx:.1}" y="{:.1}" width="14" height="12" fill="{}" stroke="#888" stroke-width="0.5"/><text x="{:.1}" y="{y:.1}"><title>{}</title>{}</text>"##,
            y - 10.0,
            fill(&styles, i),
            lx + 18.0,
            escape(&e.label),
            escape(&truncate(&e.label, key_chars))
        );
    }
    let mut ny = ly + legend_rows * 18.0 - 2.0;
    if merged_pixels {
        ny += 16.0;
        let _ = writeln!(
            out,
            r##"<text x="8" y="{ny:.1}" fill="#555">Where bars are narrower than a pixel, the pixel shows the name that covers most of it, fainter where little is covered.</text>"##
        );
    }
    if merged_rows {
        ny += 16.0;
        let _ = writeln!(
            out,
            r##"<text x="8" y="{ny:.1}" fill="#555">{} tracks in {} rows: a row of several tracks shows, per pixel, the name that covers most of their time, fainter where little is covered.</text>"##,
            tracks.len(),
            rows.len()
        );
    }
    out.push_str("</svg>\n");
    out
}

/// Column opacity: 0.3 to 1 by the share covered, in tenths.
fn opacity(share: f64) -> f64 {
    ((0.3 + 0.7 * share.clamp(0.0, 1.0)) * 10.0).round() / 10.0
}

fn truncate(s: &str, chars: usize) -> Cow<'_, str> {
    if s.chars().count() <= chars {
        return Cow::Borrowed(s);
    }
    let keep: String = s.chars().take(chars.saturating_sub(1)).collect();
    Cow::Owned(format!("{keep}…"))
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
    use std::collections::HashSet;

    use super::*;

    fn names(trace: &Trace, track: usize) -> Vec<&str> {
        trace.tracks[track]
            .spans
            .iter()
            .map(|s| trace.names[s.name as usize].as_str())
            .collect()
    }

    fn trace_of(spans: &[(&str, f64, f64)]) -> Trace {
        let mut b = Builder::default();
        let spans = spans
            .iter()
            .map(|&(n, start, dur)| Span {
                start,
                dur,
                name: b.intern(n),
            })
            .collect();
        Trace {
            names: b.names,
            tracks: vec![Track {
                pid: 1,
                tid: 1,
                label: "t".into(),
                device: None,
                spans,
            }],
        }
    }

    /// Elements drawn: bars, texts and lines.
    fn elements(svg: &str) -> usize {
        svg.matches("<rect").count() + svg.matches("<text").count() + svg.matches("<line").count()
    }

    #[test]
    fn complete_and_begin_end_events_become_spans() {
        let text = r#"{"other": {"x": [1, 2]}, "traceEvents":[
            {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"task 2"}},
            {"ph":"X","name":"run","pid":1,"tid":2,"ts":10,"dur":5,"args":{"worker":0}},
            {"ph":"B","name":"wa\"it","pid":1,"tid":3,"ts":12},
            {"ph":"E","pid":1,"tid":3,"ts":20},
            {"ph":"i","name":"ignored","pid":1,"tid":3,"ts":21},
            {"ph":"X","name":"strings","pid":"1","tid":"4","ts":"1.5","dur":2,"args":{"name":7}},
            3, "x", [1], null
        ]}"#;
        let trace = parse(text.as_bytes()).unwrap();
        assert_eq!(trace.tracks.len(), 3);
        assert_eq!(trace.tracks[0].label, "task 2");
        assert_eq!(
            trace.tracks[0].spans,
            vec![Span {
                start: 10.0,
                dur: 5.0,
                name: 0
            }]
        );
        assert_eq!(trace.tracks[1].label, "1/3");
        assert_eq!(names(&trace, 1), ["wa\"it"]);
        assert_eq!(trace.tracks[1].spans[0].dur, 8.0);
        assert_eq!(trace.tracks[2].label, "1/4");
        assert_eq!(trace.tracks[2].spans[0].start, 1.5);
    }

    #[test]
    fn bare_arrays_are_accepted_and_bad_json_is_an_error() {
        let trace = parse(br#"[{"ph":"X","name":"a","tid":1,"ts":0,"dur":1}]"#).unwrap();
        assert_eq!(trace.tracks.len(), 1);
        assert!(parse(b"{").is_err());
        assert!(parse(br#"{"traceEvents": 3}"#).is_err());
        assert!(parse(br#"{"events": []}"#).is_err());
        assert!(parse(b"42").is_err());
        assert!(parse(b"[] x").is_err());
    }

    #[test]
    fn flattening_keeps_what_shows_when_spans_are_drawn_in_order() {
        // run [0, 10) holding op [2, 4); a wait [10, 20) overlapped by a
        // runnable [18, 21).
        let t = trace_of(&[
            ("run", 0.0, 10.0),
            ("op", 2.0, 2.0),
            ("wait", 10.0, 10.0),
            ("runnable", 18.0, 3.0),
        ]);
        let pieces: Vec<(f64, f64, usize)> = flatten(&t.tracks[0].spans)
            .iter()
            .map(|p| (p.start, p.end, p.span))
            .collect();
        assert_eq!(
            pieces,
            [
                (0.0, 2.0, 0),
                (2.0, 4.0, 1),
                (4.0, 10.0, 0),
                (10.0, 18.0, 2),
                (18.0, 21.0, 3)
            ]
        );
    }

    #[test]
    fn render_draws_bars_with_escaped_names_and_labels_wide_ones() {
        let t = trace_of(&[("a&b", 0.0, 1000.0), ("c", 1000.0, 500.0)]);
        let mut t = t;
        t.tracks[0].label = "<w>".into();
        let svg = render(&t, "t");
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<title>a&amp;b 1.0 ms</title>").count(), 1);
        assert!(svg.contains("&lt;w&gt;"));
        // Both bars are wide enough for their names.
        assert!(svg.contains(">a&amp;b</text>"));
        assert!(svg.contains(">c</text>"));
    }

    /// The fills of the legend's keys, in order.
    fn key_fills(svg: &str) -> Vec<String> {
        svg.lines()
            .filter(|l| l.starts_with(r#"<rect class="key""#))
            .map(|l| {
                let f = l.split(" fill=\"").nth(1).unwrap();
                f[..f.find('"').unwrap()].to_string()
            })
            .collect()
    }

    #[test]
    fn legend_entries_never_look_alike() {
        // 33 names, as in a trace of examples/train_digits.weft: Weft's own
        // (fixed colours), ops and worker spans named after tasks.
        let mut spans: Vec<(String, f64, f64)> = Vec::new();
        let fixed = ["run", "runnable", "wait: chan receive", "wait: chan send"];
        for (i, n) in fixed.iter().enumerate() {
            spans.push((n.to_string(), i as f64 * 10.0, 5.0));
        }
        for i in 0..29 {
            spans.push((format!("op{i}"), 100.0 + i as f64, 0.5 + i as f64));
        }
        for count in [33, 60, 80] {
            let mut all = spans.clone();
            for i in all.len()..count {
                all.push((format!("extra{i}"), 500.0 + i as f64, 1.0));
            }
            let refs: Vec<(&str, f64, f64)> =
                all.iter().map(|(n, s, d)| (n.as_str(), *s, *d)).collect();
            let t = trace_of(&refs);
            let legend = legend(&t);
            let styles: HashSet<Style> = legend.entries.iter().map(|e| e.style).collect();
            assert_eq!(styles.len(), legend.entries.len(), "{count} names");
            let svg = render(&t, "t");
            let fills = key_fills(&svg);
            assert_eq!(fills.len(), legend.entries.len());
            assert_eq!(fills.iter().collect::<HashSet<_>>().len(), fills.len());
            // Every name has an entry; up to 52 + the fixed names, its own.
            for (i, name) in t.names.iter().enumerate() {
                let e = &legend.entries[legend.of_name[i]];
                if count <= 52 + fixed.len() {
                    assert_eq!(&e.label, name);
                } else {
                    assert!(&e.label == name || e.label.starts_with("other ("));
                }
            }
            // Weft's names keep their colours; the others are not those.
            let run = &legend.entries[legend.of_name[0]];
            assert_eq!(run.style.colour, "#4e79a7");
            let fixed_colours: HashSet<&str> = FIXED.iter().map(|(_, c)| *c).collect();
            for e in &legend.entries[fixed.len()..] {
                assert!(!fixed_colours.contains(e.style.colour), "{e:?}");
            }
        }
    }

    /// A trace like `weft run --trace` writes for `tasks` tasks that each
    /// sleep, then send: polls, a wait, a wake and a runnable span per task,
    /// and two workers' tracks.
    fn synthetic(tasks: usize) -> String {
        let mut s = String::from(r#"{"traceEvents":["#);
        let mut ev = |e: String| {
            if !s.ends_with('[') {
                s.push(',');
            }
            s.push_str(&e);
        };
        for t in 1..=tasks {
            ev(format!(
                r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{t},"args":{{"name":"sleeper #{t}"}}}}"#
            ));
        }
        for w in 0..2 {
            ev(format!(
                r#"{{"name":"thread_name","ph":"M","pid":2,"tid":{w},"args":{{"name":"worker {w}"}}}}"#
            ));
        }
        for t in 1..=tasks {
            let at = t as f64 * 0.5;
            let w = t % 2;
            let wake = at + 5.0 + (t % 10) as f64 * 100.0;
            for (name, cat, ts, dur) in [
                ("run", "run", at, 0.3),
                ("wait: sleep", "wait", at + 0.3, wake - at - 0.3),
                ("runnable", "runnable", wake, 2.0),
                ("run", "run", wake + 2.0, 0.4),
            ] {
                ev(format!(
                    r#"{{"name":"{name}","cat":"{cat}","ph":"X","pid":1,"tid":{t},"ts":{ts},"dur":{dur},"args":{{"worker":{w}}}}}"#
                ));
                if cat == "run" {
                    ev(format!(
                        r#"{{"name":"sleeper #{t}","cat":"worker","ph":"X","pid":2,"tid":{w},"ts":{ts},"dur":{dur},"args":{{"worker":{w},"task":{t}}}}}"#
                    ));
                }
            }
            ev(format!(
                r#"{{"name":"woken","cat":"wake","ph":"i","s":"t","pid":1,"tid":{t},"ts":{wake},"args":{{"by":0}}}}"#
            ));
        }
        s.push_str("]}");
        s
    }

    #[test]
    fn a_large_trace_draws_a_bounded_picture() {
        let text = synthetic(20_000);
        let trace = parse(text.as_bytes()).unwrap();
        assert_eq!(trace.tracks.len(), 20_002);
        let svg = render(&trace, "big");
        let n = elements(&svg);
        // Rows are bounded, and so is each row (two elements per pixel column
        // at most): here far fewer, as alike neighbours merge.
        let rows = svg.matches(r#"<text x="8" y=""#).count();
        assert!(rows <= MAX_ROWS + 4, "{rows} rows");
        assert!(n < 20_000, "{n} elements");
        assert!(svg.len() < 4 << 20, "{} bytes", svg.len());
        // The workers keep a row each; the tasks share the rest.
        assert!(svg.contains(">worker 0</text>") && svg.contains(">worker 1</text>"));
        assert!(
            svg.contains("sleeper #1–#"),
            "shared rows are labelled by range"
        );
        assert!(svg.contains("20002 tracks in"));
        // The workers' spans, named after the 20,000 tasks they polled,
        // share one legend entry.
        let legend = legend(&trace);
        let labels: Vec<&str> = legend.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(
            labels,
            ["run", "runnable", "wait: sleep", "sleeper #1…#20000"]
        );
    }

    #[test]
    fn shared_rows_split_processes_and_keep_small_ones() {
        let track = |pid, tid| Track {
            pid,
            tid,
            label: format!("x #{tid}"),
            device: None,
            spans: vec![Span {
                start: 0.0,
                dur: 1.0,
                name: 0,
            }],
        };
        let mut tracks: Vec<Track> = (1..=1000).map(|t| track(1, t)).collect();
        tracks.extend((0..3).map(|w| track(2, w)));
        let rows = rows(&tracks);
        assert!(rows.len() <= MAX_ROWS);
        assert_eq!(rows.iter().map(|r| r.tracks.len()).sum::<usize>(), 1003);
        assert!(rows[rows.len() - 3..].iter().all(|r| r.tracks.len() == 1));
        assert!(rows
            .iter()
            .all(|r| r.tracks.iter().all(|t| t.pid == r.tracks[0].pid)));
        assert_eq!(
            rows[0].label,
            format!(
                "x #1–#{} ({} tracks)",
                rows[0].tracks.len(),
                rows[0].tracks.len()
            )
        );
        // Few tracks: one row each.
        assert_eq!(super::rows(&tracks[..100]).len(), 100);
    }
}
