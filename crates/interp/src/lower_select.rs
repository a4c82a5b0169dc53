//! Lowering of `select`, its operands: the cases of the one `Select`
//! instruction (each case's channel and value slots, where a received value
//! and `ok` go, the zero value for a closed channel) and the blocks to
//! emit after it. Each case keeps its own source location (the optional
//! `case_locs` attribute: line, column per case) so that a panic in a
//! chosen case points at the case. `lower.rs` emits the instruction and
//! the blocks, and sets each case's target.

use weft_ir::pb;

use super::code::SelCase;
use super::lower_emit::{attr, bad, Emitter, LowerError};
use super::value::{zero_value, Ty};

/// A `select` op, decoded: its cases (targets not yet set), the case
/// blocks (in case order) and the default block.
pub(super) struct SelectParts<'p> {
    pub cases: Vec<SelCase>,
    pub blocks: Vec<&'p pb::BlockDesc>,
    pub default: Option<&'p pb::BlockDesc>,
}

impl<'p> Emitter<'_, 'p> {
    /// Decodes a `select` op.
    pub(super) fn select_parts(
        &mut self,
        op: &'p pb::OpDesc,
    ) -> Result<SelectParts<'p>, LowerError> {
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
        let mut case_blocks = Vec::with_capacity(blocks.len());
        for b in &blocks {
            let blk = self
                .cx
                .block(*b)
                .ok_or_else(|| bad(op, format!("block {b} does not exist")))?;
            case_blocks.push(blk);
        }
        Ok(SelectParts {
            cases,
            blocks: case_blocks,
            default: default_b,
        })
    }
}
