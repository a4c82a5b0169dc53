//! Renders `docs/ir.md`: the prose of `ir_intro.md` followed by the op tables
//! generated from the registry ([`crate::registry::OPS`]).
//!
//! Invariant: `docs/ir.md` equals [`render_ir_doc`]'s output; `tests/ir_doc.rs`
//! fails when they differ and rewrites the file under `WEFT_BLESS=1`.

use std::fmt::Write;

use crate::builder::ProgramBuilder;
use crate::dump::dump;
use crate::pb::{ProgramDesc, Type};
use crate::registry::{Arity, AttrSpec, SlotSpec, Ty, OPS};

const INTRO: &str = include_str!("ir_intro.md");

const TEXT_FORM_HEAD: &str = "
## Text form

`weft dump` (and `weft_ir::dump`) print a program as text. This program
(`ex.weft`: make a channel, send 1 on it from a `go` block, receive and print
it) prints as:

```text
";

const TEXT_FORM_TAIL: &str = "```

The header gives the version and entry, then structs and function
signatures. Each function's body block follows with its variables and ops;
an op's sub-blocks are printed indented under it. An op prints as
`outputs = type(inputs) attributes on device @file:line:col`: a lone `Out`
output prints as its variable, other slots as `Slot: v` (or `Slot: [a, b]`
for zero or several variables); block attributes print as `#N`. The same
program always prints the same text, and any program, even one the verifier
rejects, prints (blocks no function reaches come last).
";

/// The program shown in the "Text form" section (it passes `verify`).
pub fn example_program() -> ProgramDesc {
    let mut b = ProgramBuilder::new();
    b.struct_decl("Pair", [("a", Type::int()), ("b", Type::chan(Type::int()))]);
    let main = b.func("main").loc("ex.weft", 1, 1).finish();
    b.var(main, "c", Type::chan(Type::int()));
    b.var(main, "x", Type::int());
    b.var(main, "ok", Type::bool());
    b.op(main, "make_chan")
        .output("Out", ["c"])
        .loc("ex.weft", 2, 7)
        .finish();
    let task = b.block(main);
    b.var(task, "one", Type::int());
    b.op(task, "const")
        .output("Out", ["one"])
        .attr("value", 1)
        .finish();
    b.op(task, "send")
        .input("Chan", ["c"])
        .input("Value", ["one"])
        .loc("ex.weft", 3, 10)
        .finish();
    b.op(main, "go")
        .input("Captures", ["c"])
        .attr("block", task)
        .loc("ex.weft", 3, 5)
        .finish();
    b.op(main, "recv")
        .input("Chan", ["c"])
        .output("Out", ["x"])
        .output("Ok", ["ok"])
        .loc("ex.weft", 4, 10)
        .finish();
    b.op(main, "print")
        .input("Args", ["x", "ok"])
        .loc("ex.weft", 5, 2)
        .finish();
    b.build()
}

/// The full text of `docs/ir.md`.
pub fn render_ir_doc() -> String {
    let mut out = String::from(INTRO);
    out.push_str(TEXT_FORM_HEAD);
    out.push_str(&dump(&example_program()));
    out.push_str(TEXT_FORM_TAIL);
    out.push_str("\n## Op table\n\n");
    out.push_str(
        "Slot notation: `Name: type`; `?` marks an optional slot, `*` a variadic one. \
         Attribute notation: `name (kind)`; `?` marks an optional attribute. \
         Block-valued attributes (`blk`, `blks`) are the op's sub-blocks.\n",
    );
    let mut group = "";
    for op in OPS {
        if op.group != group {
            group = op.group;
            let _ = write!(
                out,
                "\n### {}\n\n| op | inputs | outputs | attributes | meaning |\n|---|---|---|---|---|\n",
                capitalize(group)
            );
        }
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            op.name,
            slots(op.inputs),
            slots(op.outputs),
            attrs(op.attrs),
            op.meaning.replace('|', "\\|")
        );
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn slots(slots: &[SlotSpec]) -> String {
    let parts: Vec<String> = slots
        .iter()
        .map(|s| {
            let mark = match s.arity {
                Arity::Required => "",
                Arity::Optional => "?",
                Arity::Variadic => "*",
            };
            match s.ty {
                Ty::Any => format!("{}{mark}", s.name),
                ty => format!("{}{mark}: {ty}", s.name),
            }
        })
        .collect();
    code_list(&parts)
}

fn attrs(attrs: &[AttrSpec]) -> String {
    let parts: Vec<String> = attrs
        .iter()
        .map(|a| {
            let mark = if a.required { "" } else { "?" };
            format!("{}{mark} ({})", a.name, a.kind)
        })
        .collect();
    code_list(&parts)
}

fn code_list(parts: &[String]) -> String {
    parts
        .iter()
        .map(|p| format!("`{}`", p.replace('|', "\\|")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_verifies() {
        crate::verify(&super::example_program()).unwrap();
    }

    #[test]
    fn lists_every_op() {
        let doc = super::render_ir_doc();
        for op in crate::registry::OPS {
            assert!(doc.contains(&format!("| `{}` |", op.name)), "{}", op.name);
        }
    }
}
