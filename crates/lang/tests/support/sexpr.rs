//! A compact S-expression form of the syntax tree for the parser's golden
//! files (`tests/golden/syntax/`): it shows grouping (precedence), the
//! statements semicolon insertion produced, and every node kind.

use weft_lang::ast::*;

pub fn file(f: &File) -> String {
    let mut out = String::new();
    for d in &f.decls {
        match d {
            Decl::Const(c) => out.push_str(&format!(
                "(const {} {}{})\n",
                c.name.name,
                opt_ty(&c.ty),
                expr(&c.value)
            )),
            Decl::Type(t) => {
                let fields: Vec<String> = t
                    .fields
                    .iter()
                    .map(|f| format!("({} {})", f.name.name, ty(&f.ty)))
                    .collect();
                out.push_str(&format!("(type {} {})\n", t.name.name, fields.join(" ")));
            }
            Decl::Func(f) => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| format!("({} {})", p.name.name, ty(&p.ty)))
                    .collect();
                let result = f
                    .result
                    .as_ref()
                    .map(|r| format!(" -> {}", ty(r)))
                    .unwrap_or_default();
                out.push_str(&format!(
                    "(func {} ({}){result}\n",
                    f.name.name,
                    params.join(" ")
                ));
                block(&mut out, &f.body.stmts, 1);
                out.push_str(")\n");
            }
        }
    }
    out
}

fn opt_ty(t: &Option<TypeExpr>) -> String {
    t.as_ref()
        .map(|t| format!("{} ", ty(t)))
        .unwrap_or_default()
}

fn ty(t: &TypeExpr) -> String {
    match &t.kind {
        TypeKind::Named(n) => n.name.clone(),
        TypeKind::Chan(e) => format!("chan {}", ty(e)),
        TypeKind::List(e) => format!("[]{}", ty(e)),
        TypeKind::Map(k, v) => format!("map[{}]{}", ty(k), ty(v)),
        TypeKind::Func { params, result } => {
            let ps: Vec<String> = params.iter().map(ty).collect();
            let r = result
                .as_ref()
                .map(|r| format!(" {}", ty(r)))
                .unwrap_or_default();
            format!("func({}){r}", ps.join(", "))
        }
        TypeKind::Tuple(ts) => {
            let ts: Vec<String> = ts.iter().map(ty).collect();
            format!("({})", ts.join(", "))
        }
    }
}

fn list(es: &[Expr]) -> String {
    es.iter().map(expr).collect::<Vec<_>>().join(" ")
}

fn names(ns: &[Ident]) -> String {
    ns.iter()
        .map(|n| n.name.clone())
        .collect::<Vec<_>>()
        .join(" ")
}

fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Bad => "<bad>".into(),
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Int(v) => v.to_string(),
        ExprKind::BigInt => "<bigint>".into(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Nil => "nil".into(),
        ExprKind::Paren(x) => format!("(paren {})", expr(x)),
        ExprKind::Unary(op, x) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Pos => "+",
                UnOp::Not => "!",
                UnOp::BitNot => "^",
                UnOp::Recv => "<-",
            };
            format!("({sym} {})", expr(x))
        }
        ExprKind::Binary(op, x, y) => format!("({} {} {})", op.symbol(), expr(x), expr(y)),
        ExprKind::Call { func, args, spread } => {
            format!(
                "(call {}{}{}{})",
                expr(func),
                if args.is_empty() { "" } else { " " },
                list(args),
                if *spread { " ..." } else { "" }
            )
        }
        ExprKind::Index(x, i) => format!("(index {} {})", expr(x), expr(i)),
        ExprKind::Slice { x, lo, hi } => {
            let b = |v: &Option<Box<Expr>>| v.as_ref().map_or("_".to_string(), |e| expr(e));
            format!("(slice {} {} {})", expr(x), b(lo), b(hi))
        }
        ExprKind::Field(x, n) => format!("(. {} {})", expr(x), n.name),
        ExprKind::StructLit { name, elems } => format!("(struct {}{})", name.name, elements(elems)),
        ExprKind::ListLit { ty: t, elems } => format!("(list {}{})", ty(t), elements(elems)),
        ExprKind::Elided(elems) => format!("(lit{})", elements(elems)),
        ExprKind::Type(t) => format!("(type {})", ty(t)),
        ExprKind::MapLit { ty: t, entries } => {
            let es: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("({} {})", expr(k), expr(v)))
                .collect();
            format!("(map {} {})", ty(t), es.join(" "))
        }
        ExprKind::FuncLit(f) => {
            let params: Vec<String> = f
                .params
                .iter()
                .map(|p| format!("({} {})", p.name.name, ty(&p.ty)))
                .collect();
            let result = f
                .result
                .as_ref()
                .map(|r| format!(" -> {}", ty(r)))
                .unwrap_or_default();
            let mut body = String::new();
            block(&mut body, &f.body.stmts, 1);
            format!("(func ({}){result}\n{body})", params.join(" "))
        }
    }
}

fn elements(es: &[Element]) -> String {
    es.iter()
        .map(|el| match &el.key {
            Some(k) => format!(" {}:{}", k.name, expr(&el.value)),
            None => format!(" {}", expr(&el.value)),
        })
        .collect()
}

fn block(out: &mut String, stmts: &[Stmt], depth: usize) {
    for s in stmts {
        stmt(out, s, depth);
    }
}

fn line(out: &mut String, depth: usize, text: &str) {
    out.push_str(&"  ".repeat(depth));
    out.push_str(text);
    out.push('\n');
}

fn stmt(out: &mut String, s: &Stmt, d: usize) {
    match &s.kind {
        StmtKind::Empty => line(out, d, "(empty)"),
        StmtKind::Var {
            names: n,
            ty: t,
            values,
        } => line(
            out,
            d,
            &format!("(var {} {}= {})", names(n), opt_ty(t), list(values)),
        ),
        StmtKind::Const(specs) => {
            for c in specs {
                line(
                    out,
                    d,
                    &format!(
                        "(const {} {}{})",
                        c.name.name,
                        opt_ty(&c.ty),
                        expr(&c.value)
                    ),
                );
            }
        }
        StmtKind::Define { names: n, values } => {
            line(out, d, &format!("(:= {} {})", names(n), list(values)))
        }
        StmtKind::Assign { lhs, op, rhs } => {
            let sym = op.map_or("=".to_string(), |o| format!("{}=", o.symbol()));
            line(out, d, &format!("({sym} {} {})", list(lhs), list(rhs)))
        }
        StmtKind::IncDec { target, inc } => line(
            out,
            d,
            &format!("({} {})", if *inc { "++" } else { "--" }, expr(target)),
        ),
        StmtKind::Expr(e) => line(out, d, &expr(e)),
        StmtKind::Send { chan, value } => {
            line(out, d, &format!("(send {} {})", expr(chan), expr(value)))
        }
        StmtKind::GoCall(e, None) => line(out, d, &format!("(go {})", expr(e))),
        StmtKind::GoCall(e, Some(on)) => line(out, d, &format!("(go {} on {})", expr(e), expr(on))),
        StmtKind::GoBlock(b, None) => nested(out, d, "(go", &b.stmts),
        StmtKind::GoBlock(b, Some(on)) => nested(out, d, &format!("(go on {}", expr(on)), &b.stmts),
        StmtKind::Return(v) => line(
            out,
            d,
            &format!(
                "(return{})",
                v.iter()
                    .map(|e| format!(" {}", expr(e)))
                    .collect::<String>()
            ),
        ),
        StmtKind::Defer(e) => line(out, d, &format!("(defer {})", expr(e))),
        StmtKind::Break(l) => line(
            out,
            d,
            &format!(
                "(break{})",
                l.as_ref()
                    .map(|l| format!(" {}", l.name))
                    .unwrap_or_default()
            ),
        ),
        StmtKind::Continue(l) => line(
            out,
            d,
            &format!(
                "(continue{})",
                l.as_ref()
                    .map(|l| format!(" {}", l.name))
                    .unwrap_or_default()
            ),
        ),
        StmtKind::Block(b) => nested(out, d, "(block", &b.stmts),
        StmtKind::If {
            init,
            cond,
            then,
            els,
        } => {
            if let Some(i) = init {
                line(out, d, "(if-init");
                stmt(out, i, d + 1);
                line(out, d, ")");
            }
            nested(out, d, &format!("(if {}", expr(cond)), &then.stmts);
            if let Some(e) = els {
                line(out, d, "(else");
                stmt(out, e, d + 1);
                line(out, d, ")");
            }
        }
        StmtKind::Switch { init, tag, cases } => {
            if let Some(i) = init {
                line(out, d, "(switch-init");
                stmt(out, i, d + 1);
                line(out, d, ")");
            }
            line(
                out,
                d,
                &format!(
                    "(switch{}",
                    tag.as_ref()
                        .map(|t| format!(" {}", expr(t)))
                        .unwrap_or_default()
                ),
            );
            for c in cases {
                let head = if c.is_default {
                    "(default".to_string()
                } else {
                    format!("(case {}", list(&c.exprs))
                };
                nested(out, d + 1, &head, &c.body);
            }
            line(out, d, ")");
        }
        StmtKind::Select(cases) => {
            line(out, d, "(select");
            for c in cases {
                let head = match &c.comm {
                    Comm::Default => "(default".to_string(),
                    Comm::Send { chan, value } => {
                        format!("(case-send {} {}", expr(chan), expr(value))
                    }
                    Comm::Recv { lhs, chan } => match lhs {
                        RecvLhs::None => format!("(case-recv {}", expr(chan)),
                        RecvLhs::Define(n) => format!("(case-recv {} := {}", names(n), expr(chan)),
                        RecvLhs::Assign(t) => format!("(case-recv {} = {}", list(t), expr(chan)),
                    },
                };
                nested(out, d + 1, &head, &c.body);
            }
            line(out, d, ")");
        }
        StmtKind::For {
            init,
            cond,
            post,
            body,
        } => {
            line(out, d, "(for");
            if let Some(i) = init {
                stmt(out, i, d + 2);
            }
            line(
                out,
                d + 1,
                &format!("cond {}", cond.as_ref().map_or("_".to_string(), expr)),
            );
            if let Some(p) = post {
                stmt(out, p, d + 2);
            }
            nested(out, d + 1, "(do", &body.stmts);
            line(out, d, ")");
        }
        StmtKind::ForRange {
            key,
            value,
            expr: x,
            body,
        } => {
            let k = key.as_ref().map_or("_", |k| k.name.as_str());
            let v = value.as_ref().map_or("_", |v| v.name.as_str());
            nested(out, d, &format!("(range {k} {v} {}", expr(x)), &body.stmts);
        }
        StmtKind::Labeled { label, stmt: inner } => {
            line(out, d, &format!("(label {}", label.name));
            stmt(out, inner, d + 1);
            line(out, d, ")");
        }
    }
}

fn nested(out: &mut String, d: usize, head: &str, body: &[Stmt]) {
    line(out, d, head);
    block(out, body, d + 1);
    line(out, d, ")");
}
