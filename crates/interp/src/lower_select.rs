//! Lowering of `select`: one `Select` instruction holding every case (its
//! channel and value slots, where a received value and `ok` go, the zero
//! value for a closed channel, and the case block's first instruction),
//! followed by the case blocks and the default block, each a `break`
//! context ending in a jump past the last of them. Each case keeps its own
//! source location (the optional `case_locs` attribute: line, column per
//! case) so that a panic in a chosen case points at the case.

use weft_ir::pb;

use super::code::{Instr, Pc, SelCase};
use super::lower::{attr, bad, Ctl, CtlKind, Emitter, LowerError};
use super::value::{zero_value, Ty};

impl<'p> Emitter<'_, 'p> {
    pub(super) fn emit_select(&mut self, op: &'p pb::OpDesc) -> Result<(), LowerError> {
        let chans = self.ins(op, "Chans");
        let values = self.ins(op, "Values");
        let recvs = self.outs(op, "Recv");
        let oks = self.outs(op, "Oks");
        let kinds: Vec<i64> = match attr(op, "kinds") {
            Some(pb::attr::Value::Ints(k)) => k.v.clone(),
            None => Vec::new(),
            Some(_) => return Err(bad(op, "kinds is not a list of ints".into())),
        };
        let blocks: Vec<i32> = match attr(op, "cases") {
            Some(pb::attr::Value::Blocks(b)) | Some(pb::attr::Value::Ints(b)) => {
                b.v.iter().map(|x| *x as i32).collect()
            }
            None => Vec::new(),
            Some(_) => return Err(bad(op, "cases is not a list of blocks".into())),
        };
        if kinds.len() != chans.len() || blocks.len() != chans.len() {
            return Err(bad(op, "kinds, cases and Chans differ in length".into()));
        }
        let case_locs: Vec<i64> = match attr(op, "case_locs") {
            Some(pb::attr::Value::Ints(k)) => k.v.clone(),
            None => Vec::new(),
            Some(_) => return Err(bad(op, "case_locs is not a list of ints".into())),
        };
        let default_b = self.sub_block(op, "default_block")?;
        let mut cases = Vec::with_capacity(chans.len());
        let mut next_value = 0;
        for (i, ch) in chans.iter().enumerate() {
            let (chan, cty) = self.vars.get(ch)?.clone();
            let elem = match &cty {
                Ty::Chan(e) => e.clone(),
                _ => return Err(bad(op, format!("{ch} is not a channel"))),
            };
            let send = kinds[i] == 1;
            let value = if send {
                let v = values
                    .get(next_value)
                    .ok_or_else(|| bad(op, "too few Values".into()))?;
                next_value += 1;
                Some(self.vars.slot(v)?)
            } else {
                None
            };
            let loc = match (case_locs.get(2 * i), case_locs.get(2 * i + 1), &op.loc) {
                (Some(&line), Some(&col), Some(l)) => Some(self.cx.loc(Some(&pb::SourceLoc {
                    file: l.file.clone(),
                    line: u32::try_from(line).unwrap_or(0),
                    col: u32::try_from(col).unwrap_or(0),
                }))),
                _ => None,
            };
            let recv = self.named_out(recvs.get(i))?;
            let ok = self.named_out(oks.get(i))?;
            cases.push(SelCase {
                send,
                chan,
                value,
                recv,
                ok,
                zero: zero_value(&elem, &self.cx.structs)?,
                target: 0,
                loc,
            });
        }
        let sel = self.push(
            Instr::Select {
                cases: Box::default(),
                default: None,
            },
            Some(op),
        );
        let mut ends = Vec::new();
        let mut default = None;
        // Each case block (and default) is its own break context.
        let mut bodies: Vec<(Option<usize>, &'p pb::BlockDesc)> = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            let blk = self
                .cx
                .block(*b)
                .ok_or_else(|| bad(op, format!("block {b} does not exist")))?;
            bodies.push((Some(i), blk));
        }
        if let Some(db) = default_b {
            bodies.push((None, db));
        }
        for (which, blk) in bodies {
            let start = self.pc() as Pc;
            match which {
                Some(i) => cases[i].target = start,
                None => default = Some(start),
            }
            self.ctl.push(Ctl {
                kind: CtlKind::Case,
                label: None,
                break_patches: Vec::new(),
            });
            self.emit_block(blk)?;
            let ctl = self
                .ctl
                .pop()
                .ok_or_else(|| bad(op, "control stack".into()))?;
            ends.extend(ctl.break_patches);
            ends.push(self.push(Instr::Jump { to: 0 }, None));
        }
        let end = self.pc();
        for p in ends {
            self.patch(p, end);
        }
        self.code[sel] = Instr::Select {
            cases: cases.into_boxed_slice(),
            default,
        };
        Ok(())
    }
}
