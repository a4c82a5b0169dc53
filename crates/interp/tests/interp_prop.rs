//! Property test: random integer expression trees, built with the IR builder
//! and run by the interpreter, agree with a reference evaluator written
//! directly in Rust (wrapping arithmetic, Go's division and shift rules,
//! `integer divide by zero` and `negative shift amount` panics).

mod interp_util;

use interp_util::P;
use proptest::prelude::*;
use weft_ir::builder::BlockId;
use weft_ir::pb::Type;

#[derive(Clone, Debug)]
enum E {
    Lit(i64),
    Bin(&'static str, Box<E>, Box<E>),
    Neg(Box<E>),
}

const OPS: [&str; 10] = [
    "add", "sub", "mul", "div", "mod", "and", "or", "xor", "shl", "shr",
];

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![(-5i64..70).prop_map(E::Lit), any::<i64>().prop_map(E::Lit),];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (0..OPS.len(), inner.clone(), inner.clone()).prop_map(|(o, a, b)| E::Bin(
                OPS[o],
                Box::new(a),
                Box::new(b)
            )),
            inner.prop_map(|a| E::Neg(Box::new(a))),
        ]
    })
}

/// The reference semantics.
fn eval(e: &E) -> Result<i64, &'static str> {
    Ok(match e {
        E::Lit(v) => *v,
        E::Neg(a) => eval(a)?.wrapping_neg(),
        E::Bin(op, a, b) => {
            let (x, y) = (eval(a)?, eval(b)?);
            match *op {
                "add" => x.wrapping_add(y),
                "sub" => x.wrapping_sub(y),
                "mul" => x.wrapping_mul(y),
                "div" | "mod" if y == 0 => return Err("integer divide by zero"),
                "div" => x.wrapping_div(y),
                "mod" => x.wrapping_rem(y),
                "and" => x & y,
                "or" => x | y,
                "xor" => x ^ y,
                "shl" | "shr" if y < 0 => return Err("negative shift amount"),
                "shl" => x.checked_shl(y as u32).filter(|_| y < 64).unwrap_or(0),
                _ => x >> y.min(63),
            }
        }
    })
}

fn emit(p: &mut P, m: BlockId, e: &E) -> String {
    match e {
        E::Lit(v) => p.int(m, *v),
        E::Neg(a) => {
            let x = emit(p, m, a);
            let t = p.b.temp(m, Type::int());
            p.op(m, "neg", &[("X", &[&x])], &[("Out", &[&t])], vec![]);
            t
        }
        E::Bin(op, a, b) => {
            let x = emit(p, m, a);
            let y = emit(p, m, b);
            p.bin(m, op, &x, &y, Type::int())
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn integer_expressions_match_the_reference(e in expr()) {
        let mut p = P::new();
        let m = p.main();
        let r = emit(&mut p, m, &e);
        p.print(m, &[&r]);
        let (out, rep) = p.run();
        match eval(&e) {
            Ok(v) => {
                prop_assert_eq!(out, format!("{v}\n"));
                prop_assert_eq!(rep.code, 0);
            }
            Err(msg) => {
                prop_assert_eq!(out, "");
                prop_assert!(rep.stderr.starts_with(&format!("panic: {msg}\n")), "{}", rep.stderr);
                prop_assert_eq!(rep.code, 2);
            }
        }
    }
}
