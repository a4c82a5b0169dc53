//! `dump(&ProgramDesc) -> String`: the stable, readable text form of a program
//! (`weft dump`, golden tests).
//!
//! Layout: a header (version, entry), structs, function signatures, then each
//! function's body block with its variables and ops; an op's sub-blocks are
//! printed indented under it, the first time they are referenced. Blocks that
//! no function reaches (a malformed program's orphans, a non-empty root) come
//! last, in index order. So every block, variable and op is printed exactly
//! once, whatever the program. Invariants: deterministic (the same program
//! always gives the same text; nothing depends on hashing or addresses) and
//! total (any program, even one `verify` rejects, prints without panicking; the
//! walk uses an explicit stack, so deep nesting cannot overflow the call stack).
//! The text is linear in the program's size: indentation stops growing past
//! `MAX_INDENT` levels (a chain of 10,000 `else if`s nests blocks that deep;
//! every block line names its parent, so nothing is lost).

use std::fmt::Write;

use crate::pb::{attr, OpDesc, OpVar, ProgramDesc, SourceLoc, Type};

/// The text form of a program; see the module docs and `docs/ir.md`.
pub fn dump(p: &ProgramDesc) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "weft ir version {}", p.version);
    let _ = writeln!(out, "entry {}", name(&p.entry));
    if !p.structs.is_empty() {
        out.push('\n');
    }
    for s in &p.structs {
        let fields: Vec<String> = s
            .fields
            .iter()
            .map(|f| format!("{} {}", name(&f.name), ty(f.r#type.as_ref())))
            .collect();
        match fields.is_empty() {
            true => {
                let _ = writeln!(out, "struct {} {{}}", name(&s.name));
            }
            false => {
                let _ = writeln!(out, "struct {} {{ {} }}", name(&s.name), fields.join("; "));
            }
        }
    }
    if !p.functions.is_empty() {
        out.push('\n');
    }
    for f in &p.functions {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|a| format!("{} {}", name(&a.name), ty(a.r#type.as_ref())))
            .collect();
        let _ = write!(out, "func {}({})", name(&f.name), params.join(", "));
        if let Some(r) = &f.result {
            let _ = write!(out, " {r}");
        }
        let _ = write!(out, " block {}", f.body_block);
        write_loc(&mut out, f.loc.as_ref());
        out.push('\n');
    }
    let mut printed = vec![false; p.blocks.len()];
    let mut roots: Vec<(usize, String)> = Vec::new();
    for f in &p.functions {
        if let Some(b) = index(p, i64::from(f.body_block)) {
            if !printed[b] {
                printed[b] = true;
                roots.push((b, format!("func {}", name(&f.name))));
            }
        }
    }
    for (b, why) in roots {
        out.push('\n');
        walk(p, &mut out, &mut printed, b, &why);
    }
    for b in 0..p.blocks.len() {
        let blk = &p.blocks[b];
        let empty_root = b == 0 && blk.vars.is_empty() && blk.ops.is_empty();
        if !printed[b] && !empty_root {
            printed[b] = true;
            out.push('\n');
            walk(
                p,
                &mut out,
                &mut printed,
                b,
                if b == 0 { "root" } else { "unowned" },
            );
        }
    }
    out
}

/// The deepest indentation, in levels of two spaces.
pub const MAX_INDENT: usize = 32;

/// The indentation of nesting level `depth`.
fn indent(depth: usize) -> String {
    "  ".repeat(depth.min(MAX_INDENT))
}

enum Item {
    Block(usize, usize),
    Op(usize, usize, usize),
}

/// Prints block `b` and, under each op, the sub-blocks not printed yet.
fn walk(p: &ProgramDesc, out: &mut String, printed: &mut [bool], b: usize, why: &str) {
    let mut stack = vec![Item::Block(b, 0)];
    let mut first = true;
    while let Some(item) = stack.pop() {
        match item {
            Item::Block(b, depth) => {
                let blk = &p.blocks[b];
                let pad = indent(depth);
                let _ = write!(out, "{pad}block {b}");
                if i64::from(blk.idx) != b as i64 {
                    let _ = write!(out, " [idx {}]", blk.idx);
                }
                let _ = write!(out, " (parent {})", blk.parent_idx);
                if first {
                    let _ = write!(out, " {why}");
                    first = false;
                }
                out.push('\n');
                for v in &blk.vars {
                    let _ = writeln!(
                        out,
                        "{}var {} {}",
                        indent(depth + 1),
                        name(&v.name),
                        ty(v.r#type.as_ref())
                    );
                }
                for k in (0..blk.ops.len()).rev() {
                    stack.push(Item::Op(b, k, depth + 1));
                }
            }
            Item::Op(b, k, depth) => {
                let op = &p.blocks[b].ops[k];
                let _ = writeln!(out, "{}op {k}: {}", indent(depth), op_line(op));
                let mut subs = Vec::new();
                for a in &op.attrs {
                    let targets: Vec<i64> = match &a.value {
                        Some(attr::Value::Block(t)) => vec![i64::from(*t)],
                        Some(attr::Value::Blocks(ts)) => ts.v.clone(),
                        _ => continue,
                    };
                    for t in targets {
                        if let Some(t) = index(p, t).filter(|&t| !printed[t]) {
                            printed[t] = true;
                            subs.push(t);
                        }
                    }
                }
                for t in subs.into_iter().rev() {
                    stack.push(Item::Block(t, depth + 1));
                }
            }
        }
    }
}

fn index(p: &ProgramDesc, i: i64) -> Option<usize> {
    usize::try_from(i).ok().filter(|&i| i < p.blocks.len())
}

/// `outs = type(ins) attrs on device @loc`.
fn op_line(op: &OpDesc) -> String {
    let mut s = String::new();
    match op.outputs.as_slice() {
        [] => {}
        [only] if only.slot == "Out" && only.args.len() == 1 => {
            let _ = write!(s, "{} = ", name(&only.args[0]));
        }
        outs => {
            let _ = write!(s, "{} = ", slots(outs));
        }
    }
    let _ = write!(s, "{}({})", name(&op.r#type), slots(&op.inputs));
    for a in &op.attrs {
        let _ = write!(s, " {}={}", name(&a.name), value(a.value.as_ref()));
    }
    if !op.device.is_empty() {
        let _ = write!(s, " on {}", name(&op.device));
    }
    write_loc(&mut s, op.loc.as_ref());
    s
}

fn slots(vars: &[OpVar]) -> String {
    let parts: Vec<String> = vars
        .iter()
        .map(|v| match v.args.as_slice() {
            [one] => format!("{}: {}", name(&v.slot), name(one)),
            args => {
                let names: Vec<String> = args.iter().map(|a| name(a)).collect();
                format!("{}: [{}]", name(&v.slot), names.join(", "))
            }
        })
        .collect();
    parts.join(", ")
}

fn value(v: Option<&attr::Value>) -> String {
    use attr::Value as V;
    fn list<T>(v: &[T], f: impl Fn(&T) -> String) -> String {
        format!("[{}]", v.iter().map(f).collect::<Vec<_>>().join(", "))
    }
    match v {
        None => "<none>".into(),
        Some(V::I(i)) => i.to_string(),
        Some(V::F(f)) => format!("{f:?}"),
        Some(V::S(s)) => format!("{s:?}"),
        Some(V::B(b)) => b.to_string(),
        Some(V::Ints(l)) => list(&l.v, |i| i.to_string()),
        Some(V::Floats(l)) => list(&l.v, |f| format!("{f:?}")),
        Some(V::Strings(l)) => list(&l.v, |s| format!("{s:?}")),
        Some(V::Bools(l)) => list(&l.v, |b| b.to_string()),
        Some(V::Block(b)) => format!("#{b}"),
        Some(V::Blocks(l)) => list(&l.v, |b| format!("#{b}")),
        Some(V::Type(t)) => format!("type({t})"),
        Some(V::Raw(b)) => quote_bytes(b),
    }
}

/// Bytes as a quoted string, as Go's `%q` writes them: a byte that is not
/// part of UTF-8 as `\xNN`.
fn quote_bytes(b: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            out.extend(c.escape_debug());
        }
        for x in chunk.invalid() {
            let _ = write!(out, "\\x{x:02x}");
        }
    }
    out.push('"');
    out
}

fn write_loc(out: &mut String, loc: Option<&SourceLoc>) {
    if let Some(l) = loc {
        let _ = write!(out, " @{}:{}:{}", name(&l.file), l.line, l.col);
    }
}

fn ty(t: Option<&Type>) -> String {
    t.map_or_else(|| "<none>".into(), |t| t.to_string())
}

/// A name as is when it is plain (letters, digits, `_ % . / - : $`), else quoted.
fn name(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || "_%./-:$".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("{s:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProgramBuilder;

    #[test]
    fn dumps_nested_blocks_under_their_op() {
        let mut b = ProgramBuilder::new();
        let main = b.func("main").loc("t.weft", 1, 1).finish();
        b.var(main, "c", Type::bool());
        b.op(main, "const")
            .output("Out", ["c"])
            .attr("value", true)
            .finish();
        let then = b.block(main);
        b.op(then, "print").input("Args", ["c", "c"]).finish();
        b.op(main, "if")
            .input("Cond", ["c"])
            .attr("then_block", then)
            .loc("t.weft", 2, 3)
            .device("cpu")
            .finish();
        let text = dump(&b.build());
        let want = "weft ir version 1\nentry main\n\nfunc main() block 1 @t.weft:1:1\n\n\
                    block 1 (parent 0) func main\n  var c bool\n  op 0: c = const() value=true\n  \
                    op 1: if(Cond: c) then_block=#2 on cpu @t.weft:2:3\n    block 2 (parent 1)\n      \
                    op 0: print(Args: [c, c])\n";
        assert_eq!(text, want);
    }
}
