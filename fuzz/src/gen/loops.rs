//! [`loop_program`]: Weft source of a program whose work is integer loops,
//! for the loop JIT's differential test (`crates/interp/tests/jit.rs`)
//! and fuzz target (`jit`): the same program run with the JIT on and off
//! must print the same and end the same way.
//!
//! `main` declares four ints (`a`..`d`, started at edge values now and
//! then: 0, -1, `MaxInt`, `MinInt`, 63, 64) and two bools, runs a counted
//! loop (counting up or down, to a constant or a variable bound) whose
//! body assigns them (`=`, `op=`, `++`, `--`) from random expressions over
//! every int operator (`/` and `%` mostly by `(e | 1)`, now and then by
//! anything, so division by zero happens; shifts mostly by `e & 63`, now
//! and then by anything, so negative and huge counts happen), comparisons,
//! `!`, `&&`, `||` and `==` on bools, with `if`/`else`, `break`,
//! `continue` and nested counted loops; then prints them all. Loop
//! counters are written only by their loops, so every run ends.
//!
//! Channels too, none of which can block the run for good: `ch` (ints,
//! buffered, a few values in it from the start) and `bc` (bools) take a
//! send and then at once a receive, so what comes out is what went in a
//! few sends earlier (FIFO order); `feed` (ints, unbuffered or buffered)
//! is fed by a second task that never stops sending `i * 7`, and `main`
//! receives from it, so every receive parks now and then.

use arbitrary::{Result, Unstructured};

const INTS: [&str; 4] = ["a", "b", "c", "d"];
const BOOLS: [&str; 2] = ["p", "q"];
const MIN_INT: &str = "(-9223372036854775807 - 1)";

struct G<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    out: String,
    /// The loop counters in scope (readable, never written by statements).
    counters: Vec<String>,
    depth: usize,
    /// Statements written so far (a soft cap on the program's size).
    stmts: usize,
}

/// A program of integer loops driven by `u` (see the module's doc).
pub fn loop_program(u: &mut Unstructured) -> Result<String> {
    let mut g = G {
        u,
        out: String::new(),
        counters: Vec::new(),
        depth: 1,
        stmts: 0,
    };
    g.line("func feeder(out chan int) {");
    g.line("\tfor i := 0; i < 1000000000; i++ {");
    g.line("\t\tout <- i * 7");
    g.line("\t}");
    g.line("}");
    g.line("func main() {");
    let cap = g.u.int_in_range(1..=8i64)?;
    g.line(&format!("ch := make(chan int, {cap})"));
    for _ in 0..g.u.int_in_range(0..=cap - 1)? {
        let e = g.literal()?;
        g.line(&format!("ch <- {e}"));
    }
    g.line("bc := make(chan bool, 2)");
    g.line("bc <- true");
    let feed = *g.u.choose(&[0i64, 0, 1, 16])?;
    g.line(&format!("feed := make(chan int, {feed})"));
    g.line("go feeder(feed)");
    for v in INTS {
        let e = g.literal()?;
        g.line(&format!("{v} := {e}"));
    }
    for v in BOOLS {
        let b = if g.u.arbitrary()? { "true" } else { "false" };
        g.line(&format!("{v} := {b}"));
    }
    let n =
        g.u.int_in_range(0..=3000i64)?
            .max(g.u.int_in_range(0..=3000i64)?);
    g.line(&format!("n := {n}"));
    g.counted_loop(true)?;
    g.line("print(a, b, c, d, p, q)");
    g.depth = 0;
    g.line("}");
    Ok(g.out)
}

impl G<'_, '_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push('\t');
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// A counted loop: the main one (to `n`, or to a constant) or a nested
    /// one (a few iterations).
    fn counted_loop(&mut self, main: bool) -> Result<()> {
        let i = format!("i{}", self.counters.len());
        let bound = if main {
            if self.u.arbitrary()? {
                "n".to_string()
            } else {
                self.u.int_in_range(0..=3000i64)?.to_string()
            }
        } else {
            self.u.int_in_range(0..=12i64)?.to_string()
        };
        let step = *self.u.choose(&[1i64, 1, 1, 2, 3])?;
        if self.u.ratio(1, 4)? {
            self.line(&format!("for {i} := {bound}; {i} > 0; {i} -= {step} {{"));
        } else {
            self.line(&format!("for {i} := 0; {i} < {bound}; {i} += {step} {{"));
        }
        self.counters.push(i);
        self.depth += 1;
        self.block(true)?;
        self.depth -= 1;
        self.counters.pop();
        self.line("}");
        Ok(())
    }

    /// The statements of a block (`in_loop`: `break` and `continue` may
    /// appear).
    fn block(&mut self, in_loop: bool) -> Result<()> {
        let n = self.u.int_in_range(1..=5)?;
        for _ in 0..n {
            if self.stmts > 40 {
                break;
            }
            self.stmt(in_loop)?;
        }
        Ok(())
    }

    fn stmt(&mut self, in_loop: bool) -> Result<()> {
        self.stmts += 1;
        let nest = self.depth < 5;
        match self.u.int_in_range(0..=22)? {
            0..=7 => {
                let v = *self.u.choose(&INTS)?;
                let e = self.int_expr(3)?;
                let op = *self.u.choose(&["=", "=", "+=", "-=", "*=", "/=", "%="])?;
                let e = match op {
                    "/=" | "%=" => self.divisor(e)?,
                    _ => e.0,
                };
                self.line(&format!("{v} {op} {e}"));
            }
            8 => {
                let v = *self.u.choose(&INTS)?;
                let op = *self.u.choose(&["++", "--"])?;
                self.line(&format!("{v}{op}"));
            }
            9..=10 => {
                let v = *self.u.choose(&BOOLS)?;
                let c = self.cond(2)?;
                self.line(&format!("{v} = {c}"));
            }
            11..=14 if nest => {
                let c = self.cond(2)?;
                self.line(&format!("if {c} {{"));
                self.depth += 1;
                self.block(in_loop)?;
                self.depth -= 1;
                if self.u.arbitrary()? {
                    self.line("} else {");
                    self.depth += 1;
                    self.block(in_loop)?;
                    self.depth -= 1;
                }
                self.line("}");
            }
            15 if in_loop => {
                let c = self.cond(2)?;
                let what = *self
                    .u
                    .choose(&["break", "continue", "continue", "continue"])?;
                self.line(&format!("if {c} {{"));
                self.depth += 1;
                self.line(what);
                self.depth -= 1;
                self.line("}");
            }
            16..=17 if nest && self.counters.len() < 3 => self.counted_loop(false)?,
            20 => {
                let e = self.int_expr(2)?.0;
                let v = *self.u.choose(&INTS)?;
                self.line(&format!("ch <- {e}"));
                self.line(&format!("{v} = <-ch"));
            }
            21 => {
                let c = self.cond(1)?;
                let v = *self.u.choose(&BOOLS)?;
                self.line(&format!("bc <- {c}"));
                self.line(&format!("{v} = <-bc"));
            }
            22 => {
                let v = *self.u.choose(&INTS)?;
                let op = *self.u.choose(&["=", "+=", "^="])?;
                self.line(&format!("{v} {op} <-feed"));
            }
            _ => {
                let v = *self.u.choose(&INTS)?;
                let w = *self.u.choose(&INTS)?;
                self.line(&format!("{v} = {w}"));
            }
        }
        Ok(())
    }

    /// An int literal: small mostly, an edge value now and then.
    fn literal(&mut self) -> Result<String> {
        Ok(match self.u.int_in_range(0..=9)? {
            0 => "0".into(),
            1 => "-1".into(),
            2 => "9223372036854775807".into(),
            3 => MIN_INT.into(),
            4 => (*self.u.choose(&["63", "64", "65", "-64", "1000003", "31"])?).into(),
            5 => match self.u.arbitrary::<i64>()? {
                i64::MIN => MIN_INT.into(),
                v => v.to_string(),
            },
            _ => self.u.int_in_range(-100..=100i64)?.to_string(),
        })
    }

    /// `(e | 1)` mostly (never zero), `e` now and then unless it is a
    /// constant (a constant division by zero does not compile).
    fn divisor(&mut self, (e, k): (String, bool)) -> Result<String> {
        Ok(if !k && self.u.ratio(1, 8)? {
            format!("({e})")
        } else {
            format!("(({e}) | 1)")
        })
    }

    /// An int expression, and whether it is a constant. Two constants are
    /// never combined (Go's constant arithmetic is exact, so an overflow
    /// would not compile).
    fn int_expr(&mut self, depth: u32) -> Result<(String, bool)> {
        if depth == 0 || self.u.ratio(1, 3)? {
            return self.int_leaf();
        }
        Ok(match self.u.int_in_range(0..=12)? {
            0 => (format!("-{}", self.int_var()?), false),
            1 => (format!("^{}", self.int_var()?), false),
            k => {
                let op = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "+"][k as usize - 2];
                let (x, kx) = self.int_expr(depth - 1)?;
                let (y, ky) = if kx {
                    (self.int_var()?, false)
                } else {
                    self.int_expr(depth - 1)?
                };
                let y = match op {
                    "/" | "%" => self.divisor((y, ky))?,
                    "<<" | ">>" if ky || !self.u.ratio(1, 8)? => format!("(({y}) & 63)"),
                    _ => format!("({y})"),
                };
                (format!("({x} {op} {y})"), false)
            }
        })
    }

    /// A variable: one of the ints or a loop counter.
    fn int_var(&mut self) -> Result<String> {
        Ok(if !self.counters.is_empty() && self.u.ratio(1, 4)? {
            self.u.choose(&self.counters)?.clone()
        } else {
            (*self.u.choose(&INTS)?).to_string()
        })
    }

    fn int_leaf(&mut self) -> Result<(String, bool)> {
        Ok(if self.u.ratio(2, 3)? {
            (self.int_var()?, false)
        } else {
            let l = self.literal()?;
            if l.starts_with('-') {
                (format!("({l})"), true)
            } else {
                (l, true)
            }
        })
    }

    fn cond(&mut self, depth: u32) -> Result<String> {
        let k = if depth == 0 {
            0
        } else {
            self.u.int_in_range(0..=7)?
        };
        Ok(match k {
            0..=2 => {
                let op = *self.u.choose(&["<", "<=", ">", ">=", "==", "!="])?;
                let (x, k) = self.int_expr(1)?;
                let y = if k {
                    self.int_var()?
                } else {
                    self.int_expr(1)?.0
                };
                format!("{x} {op} {y}")
            }
            3 => (*self.u.choose(&BOOLS)?).to_string(),
            4 => format!("!{}", self.u.choose(&BOOLS)?),
            5 => format!("({}) && ({})", self.cond(depth - 1)?, self.cond(depth - 1)?),
            6 => format!("({}) || ({})", self.cond(depth - 1)?, self.cond(depth - 1)?),
            _ => {
                let op = *self.u.choose(&["==", "!="])?;
                format!(
                    "{} {op} ({})",
                    self.u.choose(&BOOLS)?,
                    self.cond(depth - 1)?
                )
            }
        })
    }
}
