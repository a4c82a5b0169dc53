//! `sprintf(format, args...)`: Go's `fmt.Sprintf`, byte for byte
//! (docs/language.md, "sprintf"). The verbs `%v %d %b %o %x %X %c %q %U
//! %e %E %f %F %g %G %s %t %%`, the flags `+ - # 0 space`, widths and
//! precisions (also `*` and argument indexes `%[n]d`), and Go's error forms
//! `%!d(string=hi)`, `%!d(MISSING)`, `%!(EXTRA int=1)`, `%!(NOVERB)`,
//! `%!d(BADINDEX)`, `%!(BADWIDTH)`, `%!(BADPREC)`.
//!
//! The code follows `fmt/print.go` (`doPrintf`, `printArg`) and
//! `fmt/format.go` (`fmtInteger`, `fmtFloat`, `pad`); floats are formatted
//! from Rust's exact decimal digits (shortest, or rounded to a precision)
//! and laid out as `strconv.FormatFloat` does. A Weft `float` is Go's
//! `float64` and prints as such in error forms; lists and structs format
//! each element with the verb, as Go's slices and structs do, and maps
//! each key and value, sorted by key as `print` sorts them; channels,
//! comms, funcs and tensors print their Weft form for `%v` (tensors also
//! for `%s`), a nil one `<nil>`.

use super::ops::decode_rune;
use super::value::Value;

/// The formatting state of one verb (Go's `fmt.fmtFlags` plus width and
/// precision).
#[derive(Clone, Copy, Default)]
struct Spec {
    wid: Option<usize>,
    prec: Option<usize>,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    /// `%+v` (struct field names; Weft structs print without them).
    plus_v: bool,
    /// `%#v` (Go syntax; strings print quoted).
    sharp_v: bool,
}

/// Go's limit on a width or precision.
fn too_large(n: usize) -> bool {
    n > 1_000_000
}

/// Formats `args` by `format` as Go's `fmt.Sprintf`; `None` when the
/// result would pass `max` bytes.
pub fn sprintf(format: &[u8], args: &[&Value], max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(format.len() + 16 * args.len());
    let end = format.len();
    let mut arg_num = 0usize;
    let mut reordered = false;
    let mut i = 0;
    while i < end {
        let mut good_arg_num = true;
        let last = i;
        while i < end && format[i] != b'%' {
            i += 1;
        }
        out.extend_from_slice(&format[last..i]);
        if i >= end {
            break;
        }
        i += 1;
        let mut sp = Spec::default();
        // Flags.
        while i < end {
            match format[i] {
                b'#' => sp.sharp = true,
                b'0' => sp.zero = !sp.minus,
                b'+' => sp.plus = true,
                b'-' => {
                    sp.minus = true;
                    sp.zero = false;
                }
                b' ' => sp.space = true,
                _ => break,
            }
            i += 1;
        }
        // An argument index, a width.
        let mut after_index;
        (arg_num, i, after_index) = arg_number(
            arg_num,
            format,
            i,
            args.len(),
            &mut good_arg_num,
            &mut reordered,
        );
        if i < end && format[i] == b'*' {
            i += 1;
            let (w, ok, next) = int_from_arg(args, arg_num);
            arg_num = next;
            if !ok {
                out.extend_from_slice(b"%!(BADWIDTH)");
            } else if w < 0 {
                sp.wid = Some(w.unsigned_abs() as usize);
                sp.minus = true;
                sp.zero = false;
            } else {
                sp.wid = Some(w as usize);
            }
            after_index = false;
        } else {
            let (n, ok, next) = parse_num(format, i, end);
            i = next;
            if ok {
                sp.wid = Some(n);
                if after_index {
                    good_arg_num = false;
                }
            }
        }
        // A precision.
        if i + 1 < end && format[i] == b'.' {
            i += 1;
            if after_index {
                good_arg_num = false;
            }
            (arg_num, i, after_index) = arg_number(
                arg_num,
                format,
                i,
                args.len(),
                &mut good_arg_num,
                &mut reordered,
            );
            if i < end && format[i] == b'*' {
                i += 1;
                let (p, ok, next) = int_from_arg(args, arg_num);
                arg_num = next;
                if ok && p >= 0 {
                    sp.prec = Some(p as usize);
                } else {
                    sp.prec = None;
                    if !ok {
                        out.extend_from_slice(b"%!(BADPREC)");
                    }
                }
                after_index = false;
            } else {
                let (n, ok, next) = parse_num(format, i, end);
                i = next;
                sp.prec = Some(if ok { n } else { 0 });
            }
        }
        if !after_index {
            (arg_num, i, _) = arg_number(
                arg_num,
                format,
                i,
                args.len(),
                &mut good_arg_num,
                &mut reordered,
            );
        }
        if i >= end {
            out.extend_from_slice(b"%!(NOVERB)");
            break;
        }
        let (verb, size) = match format[i] {
            c if c < 0x80 => (c as u32, 1),
            _ => decode_rune(format, i),
        };
        i += size;
        if verb == '%' as u32 {
            out.push(b'%');
        } else if !good_arg_num {
            bang(&mut out, verb, b"BADINDEX");
        } else if arg_num >= args.len() {
            bang(&mut out, verb, b"MISSING");
        } else {
            if verb == 'v' as u32 {
                sp.sharp_v = sp.sharp;
                sp.sharp = false;
                sp.plus_v = sp.plus;
                sp.plus = false;
            }
            print_arg(&mut out, &sp, args[arg_num], verb);
            arg_num += 1;
        }
        if out.len() > max {
            return None;
        }
    }
    if !reordered && arg_num < args.len() {
        out.extend_from_slice(b"%!(EXTRA ");
        for (k, a) in args[arg_num..].iter().enumerate() {
            if k > 0 {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(type_name(a).as_bytes());
            out.push(b'=');
            print_arg(&mut out, &Spec::default(), a, 'v' as u32);
        }
        out.push(b')');
    }
    (out.len() <= max).then_some(out)
}

/// `%!V(WHAT)`.
fn bang(out: &mut Vec<u8>, verb: u32, what: &[u8]) {
    out.extend_from_slice(b"%!");
    push_rune(out, verb);
    out.push(b'(');
    out.extend_from_slice(what);
    out.push(b')');
}

fn push_rune(out: &mut Vec<u8>, r: u32) {
    let c = char::from_u32(r).unwrap_or(char::REPLACEMENT_CHARACTER);
    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
}

/// Go's `parsenum`: digits from `i`; not a number past `too_large`.
fn parse_num(s: &[u8], start: usize, end: usize) -> (usize, bool, usize) {
    if start >= end {
        return (0, false, end);
    }
    let mut n = 0usize;
    let mut is_num = false;
    let mut i = start;
    while i < end && s[i].is_ascii_digit() {
        if too_large(n) {
            return (0, false, end);
        }
        n = n * 10 + (s[i] - b'0') as usize;
        is_num = true;
        i += 1;
    }
    (n, is_num, i)
}

/// Go's `argNumber`: an explicit `[n]` at `i`.
fn arg_number(
    arg_num: usize,
    format: &[u8],
    i: usize,
    num_args: usize,
    good: &mut bool,
    reordered: &mut bool,
) -> (usize, usize, bool) {
    if format.len() <= i || format[i] != b'[' {
        return (arg_num, i, false);
    }
    *reordered = true;
    let rest = &format[i..];
    let (index, wid, ok) = 'parse: {
        if rest.len() < 3 {
            break 'parse (0, 1, false);
        }
        for k in 1..rest.len() {
            if rest[k] == b']' {
                let (n, ok, next) = parse_num(rest, 1, k);
                if !ok || next != k {
                    break 'parse (0, k + 1, false);
                }
                break 'parse (n as i64 - 1, k + 1, true);
            }
        }
        (0, 1, false)
    };
    if ok && 0 <= index && (index as usize) < num_args {
        return (index as usize, i + wid, true);
    }
    *good = false;
    (arg_num, i + wid, ok)
}

/// Go's `intFromArg`: a `*` width or precision.
fn int_from_arg(args: &[&Value], arg_num: usize) -> (i64, bool, usize) {
    match args.get(arg_num) {
        Some(Value::Int(n)) if !too_large(n.unsigned_abs() as usize) => (*n, true, arg_num + 1),
        Some(_) => (0, false, arg_num + 1),
        None => (0, false, arg_num),
    }
}

/// Go's type name of a value, for the error forms.
fn type_name(v: &Value) -> String {
    match v {
        Value::Int(_) => "int".into(),
        Value::Float(_) => "float64".into(),
        Value::Bool(_) => "bool".into(),
        Value::Str(_) => "string".into(),
        Value::List(l) => match l.first() {
            Some(e) => format!("[]{}", type_name(e)),
            None => "[]".into(),
        },
        Value::Struct(_) => "struct".into(),
        Value::Chan(c) => format!("chan {}", c.elem),
        Value::Tensor(_) => "tensor".into(),
        Value::Comm(_) => "comm".into(),
        Value::Map(m) => match m.entries.first() {
            Some((k, v)) => format!("map[{}]{}", type_name(&k.0), type_name(v)),
            None => "map".into(),
        },
        Value::Func(_) => "func".into(),
    }
}

/// Go's `printArg` / `printValue` for one operand.
fn print_arg(out: &mut Vec<u8>, sp: &Spec, v: &Value, verb: u32) {
    let Some(c) = char::from_u32(verb) else {
        return bad_verb(out, sp, v, verb);
    };
    match v {
        Value::Bool(b) => match c {
            't' | 'v' => pad(out, sp, if *b { b"true" } else { b"false" }),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::Int(n) => match c {
            'v' | 'd' => fmt_integer(out, sp, *n, 10, c, false),
            'b' => fmt_integer(out, sp, *n, 2, c, false),
            'o' | 'O' => fmt_integer(out, sp, *n, 8, c, false),
            'x' => fmt_integer(out, sp, *n, 16, c, false),
            'X' => fmt_integer(out, sp, *n, 16, c, true),
            'c' => {
                let r = rune_of(*n);
                let mut b = Vec::new();
                push_rune(&mut b, r);
                pad(out, sp, &b);
            }
            'q' => {
                let r = rune_of(*n);
                let mut b = Vec::new();
                quote_rune(&mut b, r, sp.plus);
                pad(out, sp, &b);
            }
            'U' => fmt_unicode(out, sp, *n),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::Float(x) => match c {
            'v' => fmt_float(out, sp, *x, 'g', None),
            'g' | 'G' => fmt_float(out, sp, *x, c, None),
            'e' | 'E' | 'f' | 'F' => fmt_float(out, sp, *x, c, Some(6)),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::Str(s) => match c {
            'v' if sp.sharp_v => fmt_q(out, sp, s),
            'v' | 's' => pad(out, sp, truncate(s, sp.prec)),
            'x' => fmt_sx(out, sp, s, false),
            'X' => fmt_sx(out, sp, s, true),
            'q' => fmt_q(out, sp, s),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::List(items) | Value::Struct(items) => {
            let (open, close) = match v {
                Value::List(_) => (b'[', b']'),
                _ => (b'{', b'}'),
            };
            out.push(open);
            for (k, e) in items.iter().enumerate() {
                if k > 0 {
                    out.push(b' ');
                }
                print_arg(out, sp, e, verb);
            }
            out.push(close);
        }
        // another process's channel (`far`) is not nil
        Value::Chan(ch) => match (c, ch.ch.is_some() || ch.far.is_some()) {
            ('v', false) => pad(out, sp, b"<nil>"),
            ('v', true) => pad(out, sp, v.to_display().as_bytes()),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::Tensor(_) => match c {
            'v' | 's' => pad(out, sp, v.to_display().as_bytes()),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::Map(m) => {
            // Go's printValue: `map[`, the entries sorted by key (the order
            // `print` uses), key and value each formatted with the verb.
            out.extend_from_slice(b"map[");
            for (k, (key, val)) in m.sorted().into_iter().enumerate() {
                if k > 0 {
                    out.push(b' ');
                }
                print_arg(out, sp, key, verb);
                out.push(b':');
                print_arg(out, sp, val, verb);
            }
            out.push(b']');
        }
        // references, as a channel: their printed form, `<nil>` when nil
        Value::Func(None) | Value::Comm(None) => match c {
            'v' => pad(out, sp, b"<nil>"),
            _ => bad_verb(out, sp, v, verb),
        },
        Value::Func(Some(_)) | Value::Comm(Some(_)) => match c {
            'v' => pad(out, sp, v.to_display().as_bytes()),
            _ => bad_verb(out, sp, v, verb),
        },
    }
}

/// Go's `badVerb`: `%!V(TYPE=VALUE)`, the value printed with `%v` and the
/// same flags.
fn bad_verb(out: &mut Vec<u8>, sp: &Spec, v: &Value, verb: u32) {
    out.extend_from_slice(b"%!");
    push_rune(out, verb);
    out.push(b'(');
    out.extend_from_slice(type_name(v).as_bytes());
    out.push(b'=');
    print_arg(out, sp, v, 'v' as u32);
    out.push(b')');
}

/// An int as a code point for `%c` and `%q`: past U+10FFFF (or negative)
/// it is U+FFFD.
fn rune_of(n: i64) -> u32 {
    match u32::try_from(n) {
        Ok(r) if char::from_u32(r).is_some() => r,
        _ => 0xFFFD,
    }
}

/// Go's `fmt.pad`: the width in characters, spaces (or zeros with `0`)
/// on the left, or on the right with `-`.
fn pad(out: &mut Vec<u8>, sp: &Spec, b: &[u8]) {
    let Some(wid) = sp.wid.filter(|&w| w > 0) else {
        out.extend_from_slice(b);
        return;
    };
    let width = wid.saturating_sub(rune_count(b));
    if sp.minus {
        out.extend_from_slice(b);
        padding(out, sp.zero, width);
    } else {
        padding(out, sp.zero, width);
        out.extend_from_slice(b);
    }
}

fn padding(out: &mut Vec<u8>, zero: bool, n: usize) {
    let c = if zero { b'0' } else { b' ' };
    out.extend(std::iter::repeat_n(c, n));
}

/// Characters of `b` as Go's `utf8.RuneCount` counts them (each byte that
/// is not UTF-8 is one).
fn rune_count(b: &[u8]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        i += decode_rune(b, i).1.max(1);
        n += 1;
    }
    n
}

/// The first `prec` characters of `s` (Go's `truncateString`).
fn truncate(s: &[u8], prec: Option<usize>) -> &[u8] {
    let Some(p) = prec else { return s };
    let mut i = 0;
    for _ in 0..p {
        if i >= s.len() {
            return s;
        }
        i += decode_rune(s, i).1.max(1);
    }
    &s[..i]
}

/// Go's `fmtInteger`.
fn fmt_integer(out: &mut Vec<u8>, sp: &Spec, n: i64, base: u64, verb: char, upper: bool) {
    let negative = n < 0;
    let mut u = n.unsigned_abs();
    let digits: &[u8; 17] = if upper {
        b"0123456789ABCDEFX"
    } else {
        b"0123456789abcdefx"
    };
    let mut prec = 0usize;
    if let Some(p) = sp.prec {
        prec = p;
        if p == 0 && u == 0 {
            padding(out, false, sp.wid.unwrap_or(0));
            return;
        }
    } else if let (true, Some(w)) = (sp.zero, sp.wid) {
        prec = w;
        if negative || sp.plus || sp.space {
            prec = prec.saturating_sub(1);
        }
    }
    let mut buf: Vec<u8> = Vec::with_capacity(68 + prec);
    loop {
        buf.push(digits[(u % base) as usize]);
        u /= base;
        if u == 0 {
            break;
        }
    }
    while buf.len() < prec {
        buf.push(b'0');
    }
    if sp.sharp {
        match base {
            2 => buf.extend_from_slice(b"b0"),
            8 if buf.last() != Some(&b'0') => buf.push(b'0'),
            16 => {
                buf.push(digits[16]);
                buf.push(b'0');
            }
            _ => {}
        }
    }
    if verb == 'O' {
        buf.extend_from_slice(b"o0");
    }
    if negative {
        buf.push(b'-');
    } else if sp.plus {
        buf.push(b'+');
    } else if sp.space {
        buf.push(b' ');
    }
    buf.reverse();
    let s = Spec { zero: false, ..*sp };
    pad(out, &s, &buf);
}

/// Go's `fmtUnicode`: `U+0041` (with `#`: `U+0041 'A'`).
fn fmt_unicode(out: &mut Vec<u8>, sp: &Spec, n: i64) {
    let mut b = format!(
        "U+{:0width$X}",
        n as u64,
        width = sp.prec.unwrap_or(4).max(4)
    )
    .into_bytes();
    if sp.sharp {
        let r = n as u64;
        if let Some(c) = u32::try_from(r).ok().and_then(char::from_u32) {
            if is_print(c as u32) {
                b.extend_from_slice(b" '");
                push_rune(&mut b, c as u32);
                b.push(b'\'');
            }
        }
    }
    let s = Spec { zero: false, ..*sp };
    pad(out, &s, &b);
}

/// Go's `fmtSbx`: `%x` and `%X` of a string's bytes.
fn fmt_sx(out: &mut Vec<u8>, sp: &Spec, s: &[u8], upper: bool) {
    let digits: &[u8; 17] = if upper {
        b"0123456789ABCDEFX"
    } else {
        b"0123456789abcdefx"
    };
    let length = match sp.prec {
        Some(p) if p < s.len() => p,
        _ => s.len(),
    };
    let mut width = 2 * length;
    if width > 0 {
        if sp.space {
            if sp.sharp {
                width *= 2;
            }
            width += length - 1;
        } else if sp.sharp {
            width += 2;
        }
    } else {
        if let Some(w) = sp.wid {
            padding(out, sp.zero, w);
        }
        return;
    }
    let wid = sp.wid.unwrap_or(0);
    if wid > width && !sp.minus {
        padding(out, sp.zero, wid - width);
    }
    if sp.sharp {
        out.push(b'0');
        out.push(digits[16]);
    }
    for (k, &c) in s[..length].iter().enumerate() {
        if sp.space && k > 0 {
            out.push(b' ');
            if sp.sharp {
                out.push(b'0');
                out.push(digits[16]);
            }
        }
        out.push(digits[(c >> 4) as usize]);
        out.push(digits[(c & 0xF) as usize]);
    }
    if wid > width && sp.minus {
        padding(out, sp.zero, wid - width);
    }
}

/// Go's `fmtQ`: a quoted string (with `#`, backquoted when it can be).
fn fmt_q(out: &mut Vec<u8>, sp: &Spec, s: &[u8]) {
    let s = truncate(s, sp.prec);
    if sp.sharp && can_backquote(s) {
        let mut b = Vec::with_capacity(s.len() + 2);
        b.push(b'`');
        b.extend_from_slice(s);
        b.push(b'`');
        return pad(out, sp, &b);
    }
    let mut b = Vec::with_capacity(s.len() + 2);
    b.push(b'"');
    let mut i = 0;
    while i < s.len() {
        let (r, w) = decode_rune(s, i);
        if w == 1 && r == 0xFFFD {
            let hex = b"0123456789abcdef";
            b.extend_from_slice(b"\\x");
            b.push(hex[(s[i] >> 4) as usize]);
            b.push(hex[(s[i] & 0xF) as usize]);
        } else {
            escaped_rune(&mut b, r, b'"', sp.plus);
        }
        i += w.max(1);
    }
    b.push(b'"');
    pad(out, sp, &b);
}

/// Go's `strconv.CanBackquote`.
fn can_backquote(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() {
        let (r, w) = decode_rune(s, i);
        if w == 1 && r == 0xFFFD && s[i] != 0xEF {
            return false;
        }
        if w > 1 {
            if r == 0xFEFF {
                return false;
            }
            i += w;
            continue;
        }
        if r == 0xFFFD {
            return false;
        }
        if (r < b' ' as u32 && r != b'\t' as u32) || r == b'`' as u32 || r == 0x7F {
            return false;
        }
        i += 1;
    }
    true
}

/// Go's `strconv.QuoteRune` (`QuoteRuneToASCII` with `ascii`).
fn quote_rune(b: &mut Vec<u8>, r: u32, ascii: bool) {
    b.push(b'\'');
    escaped_rune(b, r, b'\'', ascii);
    b.push(b'\'');
}

/// Go's `appendEscapedRune`.
fn escaped_rune(b: &mut Vec<u8>, r: u32, quote: u8, ascii: bool) {
    let hex = b"0123456789abcdef";
    if r == quote as u32 || r == b'\\' as u32 {
        b.push(b'\\');
        b.push(r as u8);
        return;
    }
    if ascii {
        if r < 0x80 && is_print(r) {
            b.push(r as u8);
            return;
        }
    } else if is_print(r) {
        push_rune(b, r);
        return;
    }
    match r {
        7 => b.extend_from_slice(b"\\a"),
        8 => b.extend_from_slice(b"\\b"),
        12 => b.extend_from_slice(b"\\f"),
        10 => b.extend_from_slice(b"\\n"),
        13 => b.extend_from_slice(b"\\r"),
        9 => b.extend_from_slice(b"\\t"),
        11 => b.extend_from_slice(b"\\v"),
        r if r < b' ' as u32 || r == 0x7F => {
            b.extend_from_slice(b"\\x");
            b.push(hex[(r >> 4) as usize & 0xF]);
            b.push(hex[(r & 0xF) as usize]);
        }
        r => {
            let r = if char::from_u32(r).is_some() {
                r
            } else {
                0xFFFD
            };
            if r < 0x10000 {
                b.extend_from_slice(b"\\u");
                for sh in [12, 8, 4, 0] {
                    b.push(hex[(r >> sh) as usize & 0xF]);
                }
            } else {
                b.extend_from_slice(b"\\U");
                for sh in [28, 24, 20, 16, 12, 8, 4, 0] {
                    b.push(hex[(r >> sh) as usize & 0xF]);
                }
            }
        }
    }
}

/// Go's `strconv.IsPrint`, closely: letters, marks, numbers, punctuation,
/// symbols and the ASCII space. Rust has no general categories, so the
/// characters Go leaves out are listed by range: controls, spaces other
/// than U+0020, format characters, surrogates, private use and
/// noncharacters.
fn is_print(r: u32) -> bool {
    if r < 0x80 {
        return (0x20..0x7F).contains(&r);
    }
    let Some(c) = char::from_u32(r) else {
        return false;
    };
    if c.is_whitespace() || c.is_control() {
        return false;
    }
    !matches!(r,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0xE000..=0xF8FF | 0xF0000.. | 0xFFFE | 0xFFFF | 0x110BD | 0x1BCA0..=0x1BCA3
        | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F)
}

/// Decimal digits of a finite float: `digits` (no leading zeros; `"0"`
/// for zero) and `dp`, the position of the decimal point (the value is
/// `0.digits × 10^dp`). `prec`: the number of significant digits, rounded
/// exactly; `None`: the shortest that reads back.
fn float_digits(x: f64, prec: Option<usize>) -> (Vec<u8>, i32) {
    let s = match prec {
        Some(p) => format!("{:.*e}", p.saturating_sub(1), x.abs()),
        None => format!("{:e}", x.abs()),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    (digits, exp + 1)
}

/// Go's `fmtFloat` (`fmt/format.go`) over `strconv.AppendFloat`.
fn fmt_float(out: &mut Vec<u8>, sp: &Spec, x: f64, verb: char, default_prec: Option<usize>) {
    let prec = sp.prec.or(default_prec);
    // The number with a sign always present, as Go builds it.
    let mut num: Vec<u8> = vec![if x.is_sign_negative() { b'-' } else { b'+' }];
    if x.is_nan() {
        num = b"+NaN".to_vec();
    } else if x.is_infinite() {
        num.extend_from_slice(b"Inf");
    } else {
        format_finite(&mut num, x, verb, prec);
    }
    if sp.space && num[0] == b'+' && !sp.plus {
        num[0] = b' ';
    }
    if num[1] == b'I' || num[1] == b'N' {
        let mut s = Spec { zero: false, ..*sp };
        s.zero = false;
        let body = if num[1] == b'N' && !sp.space && !sp.plus {
            &num[1..]
        } else {
            &num[..]
        };
        return pad(out, &s, body);
    }
    if sp.sharp && verb != 'b' {
        sharp_float(&mut num, verb, prec);
    }
    if sp.plus || num[0] != b'+' {
        if let (true, Some(w)) = (sp.zero, sp.wid) {
            if w > num.len() {
                out.push(num[0]);
                padding(out, true, w - num.len());
                out.extend_from_slice(&num[1..]);
                return;
            }
        }
        return pad(out, sp, &num);
    }
    pad(out, sp, &num[1..]);
}

/// `strconv.FormatFloat(x, verb, prec, 64)` of a finite `x`, without its
/// sign, appended to `num`.
fn format_finite(num: &mut Vec<u8>, x: f64, verb: char, prec: Option<usize>) {
    let upper = verb.is_ascii_uppercase();
    match verb.to_ascii_lowercase() {
        'e' => {
            let p = prec.unwrap_or(6);
            let (d, dp) = float_digits(x, Some(p + 1));
            fmt_e(num, &d, dp, p, upper);
        }
        'f' => {
            let s = format!("{:.*}", prec.unwrap_or(6), x.abs());
            num.extend_from_slice(s.as_bytes());
        }
        _ => {
            // 'g'
            let (mut d, dp) = match prec {
                None => float_digits(x, None),
                Some(p) => float_digits(x, Some(p.max(1))),
            };
            while d.len() > 1 && d.last() == Some(&b'0') {
                d.pop();
            }
            if d == b"0" {
                d.clear();
            }
            let nd = d.len() as i32;
            let dp = if nd == 0 { 0 } else { dp };
            let shortest = prec.is_none();
            let mut p = match prec {
                None => nd,
                Some(p) => p.max(1) as i32,
            };
            let mut eprec = p;
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            if exp < -4 || exp >= eprec {
                if p > nd {
                    p = nd;
                }
                fmt_e(num, &d, dp, (p - 1).max(0) as usize, upper);
            } else {
                if p > dp {
                    p = nd;
                }
                fmt_f(num, &d, dp, (p - dp).max(0) as usize);
            }
        }
    }
}

/// `%e` from digits: `d.ddde±XX` with `prec` digits after the point.
fn fmt_e(num: &mut Vec<u8>, d: &[u8], dp: i32, prec: usize, upper: bool) {
    num.push(d.first().copied().unwrap_or(b'0'));
    if prec > 0 {
        num.push(b'.');
        for k in 1..=prec {
            num.push(d.get(k).copied().unwrap_or(b'0'));
        }
    }
    num.push(if upper { b'E' } else { b'e' });
    let exp = if d.is_empty() || d == b"0" { 0 } else { dp - 1 };
    num.push(if exp < 0 { b'-' } else { b'+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        num.push(b'0');
    }
    num.extend_from_slice(e.to_string().as_bytes());
}

/// `%f` from digits with `prec` digits after the point.
fn fmt_f(num: &mut Vec<u8>, d: &[u8], dp: i32, prec: usize) {
    if dp > 0 {
        for k in 0..dp as usize {
            num.push(d.get(k).copied().unwrap_or(b'0'));
        }
    } else {
        num.push(b'0');
    }
    if prec > 0 {
        num.push(b'.');
        for k in 1..=prec as i32 {
            let j = dp + k - 1;
            let c = if j >= 0 {
                d.get(j as usize).copied()
            } else {
                None
            };
            num.push(c.unwrap_or(b'0'));
        }
    }
}

/// The `#` flag on a float (Go's `fmtFloat`): a decimal point always, and
/// for `%g` the trailing zeros kept up to the precision (6 by default).
fn sharp_float(num: &mut Vec<u8>, verb: char, prec: Option<usize>) {
    let mut digits: i64 = match verb {
        'v' | 'g' | 'G' | 'x' => prec.map_or(6, |p| p as i64),
        _ => 0,
    };
    let mut tail = Vec::new();
    let mut has_point = false;
    let mut saw_nonzero = false;
    let mut k = 1;
    while k < num.len() {
        match num[k] {
            b'.' => has_point = true,
            b'p' | b'P' | b'e' | b'E' => {
                tail = num.split_off(k);
                break;
            }
            c => {
                if c != b'0' {
                    saw_nonzero = true;
                }
                if saw_nonzero {
                    digits -= 1;
                }
            }
        }
        k += 1;
    }
    if !has_point {
        if num.len() == 2 && num[1] == b'0' {
            digits -= 1;
        }
        num.push(b'.');
    }
    while digits > 0 {
        num.push(b'0');
        digits -= 1;
    }
    num.extend_from_slice(&tail);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(format: &str, args: &[Value]) -> String {
        let refs: Vec<&Value> = args.iter().collect();
        String::from_utf8(sprintf(format.as_bytes(), &refs, usize::MAX).unwrap()).unwrap()
    }

    /// A few of the golden cases of `crates/weft/tests/programs/sprintf.weft`
    /// (whose expected output Go produced), at the unit level.
    #[test]
    fn verbs_as_go() {
        let i = Value::Int;
        let x = Value::Float;
        assert_eq!(
            f("%5d|%-5d|%05d", &[i(42), i(42), i(-42)]),
            "   42|42   |-0042"
        );
        assert_eq!(
            f("%x %X %#x %o %b", &[i(255), i(255), i(255), i(8), i(5)]),
            "ff FF 0xff 10 101"
        );
        assert_eq!(
            f(
                "%.2f %8.3f %08.3f %e",
                &[x(1.23456), x(2.5), x(-2.5), x(1234.5678)]
            ),
            "1.23    2.500 -002.500 1.234568e+03"
        );
        assert_eq!(
            f("%g %g %g %v", &[x(1e6), x(100000.0), x(1e-5), x(2.0)]),
            "1e+06 100000 1e-05 2"
        );
        assert_eq!(
            f(
                "%s|%-8s|%8s|%q",
                &[
                    Value::str("hi"),
                    Value::str("ab"),
                    Value::str("ab"),
                    Value::str("a\"b\n")
                ]
            ),
            "hi|ab      |      ab|\"a\\\"b\\n\""
        );
        assert_eq!(
            f(
                "%t %v %c %%",
                &[Value::Bool(true), Value::Bool(false), i(233)]
            ),
            "true false é %"
        );
        assert_eq!(f("%d", &[Value::str("hi")]), "%!d(string=hi)");
        assert_eq!(f("%d %d", &[i(1)]), "1 %!d(MISSING)");
        assert_eq!(f("%d", &[i(1), Value::str("a")]), "1%!(EXTRA string=a)");
        assert_eq!(f("%", &[]), "%!(NOVERB)");
        assert_eq!(
            f(
                "%f %v %5.1f",
                &[x(f64::INFINITY), x(f64::NAN), x(f64::NEG_INFINITY)]
            ),
            "+Inf NaN  -Inf"
        );
    }
}
