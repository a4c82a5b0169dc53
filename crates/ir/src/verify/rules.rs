//! Type relations of op meanings, checked after the per-slot types: operands
//! that must share a type, a channel's element type against sent and received
//! values, call arguments against parameters, struct fields, select's case
//! layout. Each rule skips what an earlier check already reported (an
//! undeclared variable has no type here), so one mistake gives one message.

use super::ops::{Arg, Bound};
use super::{Ctx, IssueKind, Site};
use crate::pb::{attr, Type};
use crate::registry::RINGS_ATTR;

pub(super) fn check(cx: &mut Ctx<'_>, site: &Site, op: &str, bd: &Bound<'_>) {
    let mut r = Rules { cx, site, op };
    match op {
        "const" => r.constant(bd),
        "copy" => r.same(bd.output("Out"), "Out", bd.input("X"), "X"),
        "add" | "sub" | "mul" | "div" => r.arith(bd),
        "neg" => {
            if let Some((x, t)) = bd.input("X") {
                let tensors = t.list_elem().is_some_and(|e| e.is_tensor());
                r.applies(x, t, t.is_int() || t.is_float() || t.is_tensor() || tensors);
                r.same(bd.output("Out"), "Out", Some((x, t)), "X");
            }
        }
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" => r.compare(bd),
        "to_int" | "to_float" => {
            if let Some((x, t)) = bd.input("X") {
                r.applies(x, t, t.is_int() || t.is_float() || t.is_string());
            }
        }
        "len" => {
            if let Some((x, t)) = bd.input("X") {
                r.applies(
                    x,
                    t,
                    t.is_string()
                        || t.list_elem().is_some()
                        || t.chan_elem().is_some()
                        || t.map_kv().is_some(),
                );
            }
        }
        "list_new" => {
            if let Some((o, t)) = bd.output("Out") {
                r.elems(bd.ins("Elems"), o, t.list_elem());
            }
        }
        "append" => {
            if let Some((x, t)) = bd.input("X") {
                r.same(bd.output("Out"), "Out", Some((x, t)), "X");
                r.elems(bd.ins("Elems"), x, t.list_elem());
            }
        }
        "index" => r.index(bd),
        "set_index" => {
            if let Some((x, t)) = bd.input("X") {
                r.same(bd.output("Out"), "Out", Some((x, t)), "X");
                r.elems(bd.ins("Value"), x, t.list_elem());
            }
        }
        "slice" => {
            if let Some((x, t)) = bd.input("X") {
                r.applies(x, t, t.is_string() || t.list_elem().is_some());
                r.same(bd.output("Out"), "Out", Some((x, t)), "X");
            }
        }
        "struct_new" => r.struct_new(bd),
        "field" | "set_field" => r.field(bd),
        "send" => {
            if let (Some((c, ct)), Some(v)) = (bd.input("Chan"), bd.ins("Value").first()) {
                r.chan_value(c, ct, v, "value ");
            }
        }
        "recv" => {
            if let (Some((c, ct)), Some(v)) = (bd.input("Chan"), bd.outs("Out").first()) {
                r.chan_value(c, ct, v, "");
            }
        }
        "select" => r.select(bd),
        "after" => {
            if let Some((o, t)) = bd.output("Out") {
                if !t.chan_elem().is_some_and(Type::is_int) {
                    r.fail(format!("after gives a chan int but Out {o:?} is {t}"));
                }
            }
        }
        "c_group" => {
            if let Some(attr::Value::I(n)) = bd.attrs.get(RINGS_ATTR) {
                if *n < 1 {
                    r.fail(format!(
                        "{RINGS_ATTR} is {n} but a group needs at least 1 ring"
                    ));
                }
            }
        }
        "c_allreduce_sum" | "c_allreduce_max" | "c_allreduce_min" | "c_allreduce_prod" => {
            if let Some((x, t)) = bd.input("X") {
                let tensors = t.list_elem().is_some_and(|e| e.is_tensor());
                r.applies(x, t, t.is_int() || t.is_float() || t.is_tensor() || tensors);
                r.same(bd.output("Out"), "Out", Some((x, t)), "X");
            }
        }
        "c_broadcast" => r.same(bd.output("Out"), "Out", bd.input("X"), "X"),
        "c_allgather" => {
            if let (Some((x, t)), Some((o, ot))) = (bd.input("X"), bd.output("Out")) {
                if !ot.list_elem().is_some_and(|e| e.same(t)) {
                    r.fail(format!("Out {o:?} is {ot} but X {x:?} is {t} (want []{t})"));
                }
            }
        }
        "call" | "go_call" => r.call(bd),
        "map_new" => r.map_new(bd),
        "map_get" | "map_set" | "map_delete" | "map_entry" => r.map_op(bd),
        "func_ref" | "closure" => r.func_value(bd),
        "call_value" | "go_value" => r.call_value(bd),
        "load_dataset" => r.dataset(bd),
        "exp" | "log" | "abs" | "sort" | "reverse" => {
            if let Some((x, t)) = bd.input("X") {
                let ok = match op {
                    "abs" => t.is_int() || t.is_float(),
                    "sort" => t
                        .list_elem()
                        .is_some_and(|e| e.is_int() || e.is_float() || e.is_string()),
                    "reverse" => true,
                    _ => t.is_float() || t.is_tensor(),
                };
                r.applies(x, t, ok);
                r.same(bd.output("Out"), "Out", Some((x, t)), "X");
            }
        }
        "min" | "max" => {
            let args = bd.ins("Args");
            match args.first().and_then(|a| a.ty.map(|t| (a.name, t))) {
                None if args.is_empty() => r.fail(format!("{op} needs at least one argument")),
                None => {}
                Some((x, t)) => {
                    r.elems(&args[1..], x, Some(t));
                    r.same(bd.output("Out"), "Out", Some((x, t)), "Args");
                }
            }
        }
        "contains" => {
            if let Some((x, t)) = bd.input("X") {
                if t.is_string() {
                    if let Some((y, yt)) = bd.input("Y") {
                        r.applies(y, yt, yt.is_string());
                    }
                } else if let Some(e) = t.list_elem() {
                    let comparable = r.comparable(e);
                    r.applies(x, t, comparable);
                    r.elems(bd.ins("Y"), x, Some(e));
                } else {
                    r.applies(x, t, false);
                }
            }
        }
        "tick" | "lines" => {
            if let Some((o, t)) = bd.output("Out") {
                let (ok, want) = match op {
                    "tick" => (t.chan_elem().is_some_and(Type::is_int), "chan int"),
                    _ => (t.chan_elem().is_some_and(Type::is_string), "chan string"),
                };
                if !ok {
                    r.fail(format!("{op} gives a {want} but Out {o:?} is {t}"));
                }
            }
        }
        "loop" if bd.attrs.contains_key("cond_block") && bd.ins("Cond").is_empty() => {
            r.fail("cond_block is set but Cond is not".into());
        }
        _ => {}
    }
}

struct Rules<'a, 'p> {
    cx: &'a mut Ctx<'p>,
    site: &'a Site,
    op: &'a str,
}

type Var<'p> = Option<(&'p str, &'p Type)>;

impl Rules<'_, '_> {
    fn fail(&mut self, msg: String) {
        self.cx.push(self.site.clone(), IssueKind::Mismatch(msg));
    }

    /// `b` must have `a`'s type.
    fn same(&mut self, b: Var<'_>, b_slot: &str, a: Var<'_>, a_slot: &str) {
        if let (Some((bn, bt)), Some((an, at))) = (b, a) {
            if !bt.same(at) {
                self.fail(format!(
                    "{b_slot} {bn:?} is {bt} but {a_slot} {an:?} is {at}"
                ));
            }
        }
    }

    fn applies(&mut self, name: &str, t: &Type, ok: bool) {
        if !ok {
            let op = self.op;
            self.fail(format!("{op} does not apply to {name:?} of type {t}"));
        }
    }

    fn constant(&mut self, bd: &Bound<'_>) {
        let (Some((o, t)), Some(v)) = (bd.output("Out"), bd.attrs.get("value")) else {
            return;
        };
        let (fits, lit) = match v {
            attr::Value::I(_) => (t.is_int(), "an int"),
            attr::Value::F(_) => (t.is_float(), "a float"),
            attr::Value::S(_) | attr::Value::Raw(_) => (t.is_string(), "a string"),
            attr::Value::B(_) => (t.is_bool(), "a bool"),
            _ => return,
        };
        if !fits {
            self.fail(format!("value is {lit} literal but Out {o:?} is {t}"));
        }
    }

    fn arith(&mut self, bd: &Bound<'_>) {
        let (Some((x, xt)), Some((y, yt))) = (bd.input("X"), bd.input("Y")) else {
            return;
        };
        let op = self.op;
        let result = if xt.same(yt) {
            let ok =
                xt.is_int() || xt.is_float() || xt.is_tensor() || (op == "add" && xt.is_string());
            if !ok {
                return self.fail(format!(
                    "{op} does not apply to {x:?} and {y:?} of type {xt}"
                ));
            }
            xt
        } else if xt.is_tensor() && yt.is_float() {
            xt
        } else if xt.is_float() && yt.is_tensor() {
            yt
        } else {
            return self.fail(format!(
                "operands of {op} differ: X {x:?} is {xt} but Y {y:?} is {yt}"
            ));
        };
        if let Some((o, ot)) = bd.output("Out") {
            if !ot.same(result) {
                self.fail(format!("Out {o:?} is {ot} but {op} gives {result}"));
            }
        }
    }

    fn compare(&mut self, bd: &Bound<'_>) {
        let (Some((x, xt)), Some((y, yt))) = (bd.input("X"), bd.input("Y")) else {
            return;
        };
        let op = self.op;
        if !xt.same(yt) {
            return self.fail(format!(
                "operands of {op} differ: X {x:?} is {xt} but Y {y:?} is {yt}"
            ));
        }
        let ok = match op {
            "eq" | "ne" => self.comparable(xt),
            _ => xt.is_int() || xt.is_float() || xt.is_string(),
        };
        if !ok {
            self.fail(format!(
                "{op} does not apply to {x:?} and {y:?} of type {xt}"
            ));
        }
    }

    /// Scalars, channels, comms, and structs whose fields are all comparable
    /// (iterative: struct nesting may be deep in a decoded program).
    fn comparable(&self, t: &Type) -> bool {
        let mut todo = vec![t];
        let mut seen = std::collections::HashSet::new();
        while let Some(t) = todo.pop() {
            // A func value or a map compares only with nil (the checker's
            // rule).
            if t.scalar_kind().is_some()
                || t.chan_elem().is_some()
                || t.is_comm()
                || t.func_type().is_some()
                || t.map_kv().is_some()
            {
                continue;
            }
            let Some(name) = t.struct_name() else {
                return false;
            };
            let Some(s) = self.cx.structs.get(name) else {
                return false;
            };
            if seen.insert(name) {
                for f in &s.fields {
                    match f.r#type.as_ref() {
                        Some(ft) => todo.push(ft),
                        None => return false,
                    }
                }
            }
        }
        true
    }

    /// Each of `elems` must have type `elem` (the element type of `list`).
    fn elems(&mut self, elems: &[Arg<'_>], list: &str, elem: Option<&Type>) {
        let Some(et) = elem else { return };
        for a in elems {
            if let Some(t) = a.ty.filter(|t| !t.same(et)) {
                self.fail(format!(
                    "elements of {list:?} are {et} but {:?} is {t}",
                    a.name
                ));
            }
        }
    }

    fn index(&mut self, bd: &Bound<'_>) {
        let Some((x, xt)) = bd.input("X") else { return };
        if let Some(et) = xt.list_elem() {
            self.same(bd.output("Out"), "Out", Some((x, et)), "the element of");
        } else if xt.is_string() {
            if let Some((o, ot)) = bd.output("Out") {
                if !ot.is_int() && !ot.is_string() {
                    self.fail(format!(
                        "Out {o:?} is {ot} but indexing string {x:?} gives int or string"
                    ));
                }
            }
        } else {
            self.applies(x, xt, false);
        }
    }

    fn struct_new(&mut self, bd: &Bound<'_>) {
        let Some((_, ot)) = bd.output("Out") else {
            return;
        };
        let Some(s) = ot
            .struct_name()
            .and_then(|n| self.cx.structs.get(n))
            .copied()
        else {
            return;
        };
        let fields = bd.ins("Fields");
        if fields.len() != s.fields.len() {
            let (want, got) = (s.fields.len(), fields.len());
            return self.fail(format!("struct {} has {want} fields, got {got}", s.name));
        }
        for (a, f) in fields.iter().zip(&s.fields) {
            if let (Some(t), Some(ft)) = (a.ty, f.r#type.as_ref()) {
                if !t.same(ft) {
                    let (n, sn, fname) = (a.name, &s.name, &f.name);
                    self.fail(format!("field {fname:?} of {sn} is {ft} but {n:?} is {t}"));
                }
            }
        }
    }

    fn field(&mut self, bd: &Bound<'_>) {
        let (Some((x, xt)), Some(name)) = (bd.input("X"), bd.attr_str("name")) else {
            return;
        };
        let Some(s) = xt
            .struct_name()
            .and_then(|n| self.cx.structs.get(n))
            .copied()
        else {
            return;
        };
        let Some(ft) = s
            .fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.r#type.as_ref())
        else {
            return self.fail(format!("struct {} of {x:?} has no field {name:?}", s.name));
        };
        if self.op == "field" {
            self.same(bd.output("Out"), "Out", Some((name, ft)), "field");
        } else {
            self.same(bd.input("Value"), "Value", Some((name, ft)), "field");
            self.same(bd.output("Out"), "Out", Some((x, xt)), "X");
        }
    }

    fn chan_value(&mut self, chan: &str, ct: &Type, v: &Arg<'_>, role: &'static str) {
        if let (Some(elem), Some(t)) = (ct.chan_elem(), v.ty) {
            if !elem.same(t) {
                let kind = IssueKind::ChanElem {
                    chan: chan.into(),
                    elem: elem.to_string(),
                    role,
                    var: v.name.into(),
                    got: t.to_string(),
                };
                self.cx.push(self.site.clone(), kind);
            }
        }
    }

    fn select(&mut self, bd: &Bound<'_>) {
        let chans = bd.ins("Chans");
        let n = chans.len();
        let kinds: &[i64] = match bd.attrs.get("kinds") {
            Some(attr::Value::Ints(k)) => &k.v,
            _ => &[],
        };
        if let Some(attr::Value::Blocks(c)) = bd.attrs.get("cases") {
            if c.v.len() != n {
                self.fail(format!(
                    "select has {n} cases (Chans) but {} case blocks",
                    c.v.len()
                ));
            }
        }
        if let Some(attr::Value::Ints(l)) = bd.attrs.get("case_locs") {
            if l.v.len() != 2 * n {
                self.fail(format!(
                    "select has {n} cases but {} case_locs entries (want line, column per case)",
                    l.v.len()
                ));
            }
        }
        if kinds.len() != n {
            return self.fail(format!(
                "select has {n} cases (Chans) but {} kinds",
                kinds.len()
            ));
        }
        if let Some(i) = kinds.iter().position(|k| *k != 0 && *k != 1) {
            return self.fail(format!(
                "kind {} of case {i} is neither 0 (recv) nor 1 (send)",
                kinds[i]
            ));
        }
        let values = bd.ins("Values");
        let sends = kinds.iter().filter(|k| **k == 1).count();
        if values.len() != sends {
            let got = values.len();
            return self.fail(format!("select has {sends} send cases but {got} Values"));
        }
        for slot in ["Recv", "Oks"] {
            let got = bd.outs(slot).len();
            if got != 0 && got != n {
                return self.fail(format!(
                    "{slot} has {got} entries for {n} cases (want 0 or {n})"
                ));
            }
        }
        let mut values = values.iter();
        for (i, (c, kind)) in chans.iter().zip(kinds).enumerate() {
            let recv = bd.outs("Recv").get(i);
            if *kind == 1 {
                for a in [recv, bd.outs("Oks").get(i)].into_iter().flatten() {
                    if a.name != "_" {
                        self.fail(format!(
                            "send case {i} binds output {:?}; use \"_\"",
                            a.name
                        ));
                    }
                }
            }
            let Some(ct) = c.ty else { continue };
            match (*kind, recv) {
                (1, _) => {
                    if let Some(v) = values.next() {
                        self.chan_value(c.name, ct, v, "value ");
                    }
                }
                (_, Some(r)) => self.chan_value(c.name, ct, r, ""),
                _ => {}
            }
        }
    }

    fn call(&mut self, bd: &Bound<'_>) {
        let Some(name) = bd.attr_str("func") else {
            return;
        };
        let Some(f) = self.cx.funcs.get(name).copied() else {
            return self
                .cx
                .push(self.site.clone(), IssueKind::UnknownFunc(name.into()));
        };
        let args = bd.ins("Args");
        if args.len() != f.params.len() {
            let kind = IssueKind::ArgCount {
                func: name.into(),
                expected: f.params.len(),
                got: args.len(),
            };
            return self.cx.push(self.site.clone(), kind);
        }
        for (i, (a, p)) in args.iter().zip(&f.params).enumerate() {
            if let (Some(t), Some(pt)) = (a.ty, p.r#type.as_ref()) {
                if !t.same(pt) {
                    let (an, pn) = (a.name, &p.name);
                    self.fail(format!(
                        "argument {i} {an:?} is {t} but parameter {pn:?} of {name:?} is {pt}"
                    ));
                }
            }
        }
        if let Some(o) = bd.outs("Out").first().filter(|o| o.name != "_") {
            match (&f.result, o.ty) {
                (None, _) => self.fail(format!("{name:?} returns nothing but Out is {:?}", o.name)),
                (Some(rt), Some(t)) if !rt.same(t) => {
                    self.fail(format!("Out {:?} is {t} but {name:?} returns {rt}", o.name))
                }
                _ => {}
            }
        }
    }

    fn map_new(&mut self, bd: &Bound<'_>) {
        let Some((o, ot)) = bd.output("Out") else {
            return;
        };
        let (keys, values) = (bd.ins("Keys"), bd.ins("Values"));
        if keys.len() != values.len() {
            let (k, v) = (keys.len(), values.len());
            return self.fail(format!("map_new has {k} Keys but {v} Values"));
        }
        if let Some((kt, vt)) = ot.map_kv() {
            self.elems(keys, o, Some(kt));
            self.elems(values, o, Some(vt));
        }
    }

    /// The key, value and entry ops: Key and Value against X's types.
    fn map_op(&mut self, bd: &Bound<'_>) {
        let Some((x, xt)) = bd.input("X") else { return };
        let Some((kt, vt)) = xt.map_kv() else { return };
        let (key, value) = match self.op {
            "map_entry" => (bd.output("Key"), bd.output("Value")),
            "map_get" => (bd.input("Key"), bd.output("Out")),
            _ => (bd.input("Key"), bd.input("Value")),
        };
        self.same(key, "Key", Some((x, kt)), "the key of");
        self.same(value, "Value", Some((x, vt)), "the value of");
        if matches!(self.op, "map_set" | "map_delete") {
            self.same(bd.output("Out"), "Out", Some((x, xt)), "X");
        }
    }

    /// `func_ref` and `closure`: Out's signature is the function's, less
    /// the parameters the Captures bind.
    fn func_value(&mut self, bd: &Bound<'_>) {
        let Some(name) = bd.attr_str("func") else {
            return;
        };
        let Some(f) = self.cx.funcs.get(name).copied() else {
            return self
                .cx
                .push(self.site.clone(), IssueKind::UnknownFunc(name.into()));
        };
        let caps = bd.ins("Captures");
        if caps.len() > f.params.len() {
            let (c, p) = (caps.len(), f.params.len());
            return self.fail(format!("{c} Captures but {name:?} has {p} parameters"));
        }
        for (a, p) in caps.iter().zip(&f.params) {
            if let (Some(t), Some(pt)) = (a.ty, p.r#type.as_ref()) {
                if !t.same(pt) {
                    let (an, pn) = (a.name, &p.name);
                    self.fail(format!(
                        "capture {an:?} is {t} but parameter {pn:?} of {name:?} is {pt}"
                    ));
                }
            }
        }
        let Some((o, ot)) = bd.output("Out") else {
            return;
        };
        let rest: Vec<Type> = f.params[caps.len()..]
            .iter()
            .filter_map(|p| p.r#type.clone())
            .collect();
        let want = Type::func(rest, f.result.clone());
        if !ot.same(&want) {
            self.fail(format!("Out {o:?} is {ot} but {name:?} gives {want}"));
        }
    }

    fn call_value(&mut self, bd: &Bound<'_>) {
        let Some((fname, ft)) = bd.input("F") else {
            return;
        };
        let Some(sig) = ft.func_type() else { return };
        let args = bd.ins("Args");
        if args.len() != sig.params.len() {
            let (p, a) = (sig.params.len(), args.len());
            return self.fail(format!("F {fname:?} takes {p} arguments, got {a}"));
        }
        for (i, (a, pt)) in args.iter().zip(&sig.params).enumerate() {
            if let Some(t) = a.ty.filter(|t| !t.same(pt)) {
                self.fail(format!(
                    "argument {i} {:?} is {t} but F {fname:?} takes {pt}",
                    a.name
                ));
            }
        }
        if let Some(o) = bd.outs("Out").first().filter(|o| o.name != "_") {
            match (&sig.result, o.ty) {
                (None, _) => self.fail(format!(
                    "F {fname:?} returns nothing but Out is {:?}",
                    o.name
                )),
                (Some(rt), Some(t)) if !rt.same(t) => self.fail(format!(
                    "Out {:?} is {t} but F {fname:?} returns {rt}",
                    o.name
                )),
                _ => {}
            }
        }
    }

    fn dataset(&mut self, bd: &Bound<'_>) {
        let Some((o, ot)) = bd.output("Out") else {
            return;
        };
        let Some(s) = ot
            .struct_name()
            .and_then(|n| self.cx.structs.get(n))
            .copied()
        else {
            return;
        };
        let want = [("x", Type::tensor()), ("y", Type::list(Type::int()))];
        let fits = s.fields.len() == 2
            && s.fields
                .iter()
                .zip(&want)
                .all(|(f, (n, t))| f.name == *n && f.r#type.as_ref().is_some_and(|ft| ft.same(t)));
        if !fits {
            self.fail(format!(
                "Out {o:?} is {ot}, which is not a struct {{x tensor; y []int}}"
            ));
        }
    }
}
