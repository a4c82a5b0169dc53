//! Renders `docs/ir.md`: the prose of `ir_intro.md` followed by the op tables
//! generated from the registry ([`crate::registry::OPS`]).
//!
//! Invariant: `docs/ir.md` equals [`render_ir_doc`]'s output; `tests/ir_doc.rs`
//! fails when they differ and rewrites the file under `WEFT_BLESS=1`.

use std::fmt::Write;

use crate::registry::{Arity, AttrSpec, SlotSpec, Ty, OPS};

const INTRO: &str = include_str!("ir_intro.md");

/// The full text of `docs/ir.md`.
pub fn render_ir_doc() -> String {
    let mut out = String::from(INTRO);
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
    fn lists_every_op() {
        let doc = super::render_ir_doc();
        for op in crate::registry::OPS {
            assert!(doc.contains(&format!("| `{}` |", op.name)), "{}", op.name);
        }
    }
}
