//! Several processes (docs/distributed.md): values as bytes and back, this
//! process's channels served to the others, the operations on another
//! process's channel, the collectives over `world()`, and the `Host` that
//! hears from `weft_mpi` how the program ends.
//!
//! A value's bytes: a tag byte, then the value; integers little-endian.
//! A string is its bytes (strings are bytes, not always UTF-8). Lists and
//! structs hold their items; a map its entries, key then value, in its
//! insertion order (so iteration order crosses too); a func value its
//! function's number and its captured values (every process runs the same
//! program, so the number names the same function there); a tensor its
//! dimensions and `f32`s;
//! a channel its element type and its reference (`weft_mpi::ChanRef`), so
//! it arrives as a reference to the same channel in its owner (and as the
//! channel itself back in its owner); `world()` arrives as the receiver's
//! own member. A comm of a group of tasks cannot cross, nor can a tensor on
//! a device inside a list or struct (one sent as it is is copied to the
//! host first).

use std::sync::{Arc, Weak};

use weft_chan::loom::Mutex;
use weft_chan::Chan;
use weft_coll::{Data, Outcome};
use weft_mpi::{chan_endpoint, ChanRef, End, Host, Payload, RemoteError, World};
use weft_rt::memlimit::Ceiling;
use weft_rt::{self as runtime, RunControl};
use weft_tensor::Tensor;

use super::code::TensorOp;
use super::error::{InternalError, RuntimeError};
use super::tensor_ops;
use super::value::{ChanVal, Closure, CommVal, FarChan, Key, MapVal, Procs, Ty, Value};

const INT: u8 = 0;
const FLOAT: u8 = 1;
const BOOL: u8 = 2;
const STR: u8 = 3;
const LIST: u8 = 4;
const STRUCT: u8 = 5;
const CHAN: u8 = 6;
const TENSOR: u8 = 7;
const WORLD: u8 = 8;
const NIL_COMM: u8 = 9;
const MAP: u8 = 10;
const FUNC: u8 = 11;
const NIL_FUNC: u8 = 12;
const NIL_MAP: u8 = 13;
/// A tensor whose floats travel beside the bytes (`Payload::attach`): its
/// dims here, its memory the payload's next attached buffer.
const TENSOR_ATTACHED: u8 = 14;

/// A host tensor of at least this many floats (256 KiB) sent over a remote
/// channel travels as an attached buffer, not copied into the payload
/// (docs/distributed.md, "Speed"); smaller ones are serialized.
const ATTACH_MIN: usize = 64 * 1024;

/// Values nest no deeper than this on the way in (a guard; both ends run
/// one program).
const MAX_DEPTH: usize = 10_000;

/// The `Procs` of a run joined to other processes.
pub fn procs(world: World) -> Arc<Procs> {
    Arc::new(Procs {
        world,
        local: Mutex::new(Default::default()),
    })
}

fn u64s(out: &mut Payload, n: usize) {
    out.extend_from_slice(&(n as u64).to_le_bytes());
}

fn encode_ty(t: &Ty, out: &mut Payload) {
    match t {
        Ty::Int => out.push(0),
        Ty::Float => out.push(1),
        Ty::Bool => out.push(2),
        Ty::Str => out.push(3),
        Ty::Tensor => out.push(4),
        Ty::Comm => out.push(5),
        Ty::Chan(e) => {
            out.push(6);
            encode_ty(e, out);
        }
        Ty::List(e) => {
            out.push(7);
            encode_ty(e, out);
        }
        Ty::Struct { id, name } => {
            out.push(8);
            out.extend_from_slice(&id.to_le_bytes());
            u64s(out, name.len());
            out.extend_from_slice(name.as_bytes());
        }
        Ty::Map(k, v) => {
            out.push(9);
            encode_ty(k, out);
            encode_ty(v, out);
        }
        Ty::Func(sig) => {
            out.push(10);
            u64s(out, sig.len());
            out.extend_from_slice(sig.as_bytes());
        }
    }
}

/// This process's channel `ch`, served to the others: its reference.
fn export(procs: &Arc<Procs>, ch: &Chan<Value>) -> ChanRef {
    let weak = Arc::downgrade(procs);
    let r = procs
        .world
        .export(ch.id(), ch.cap(), || endpoint(weak, ch.clone()));
    procs.local.lock().entry(r.id).or_insert_with(|| ch.clone());
    r
}

fn endpoint(weak: Weak<Procs>, ch: Chan<Value>) -> Arc<dyn weft_mpi::Endpoint> {
    let w2 = weak.clone();
    chan_endpoint(
        ch,
        move |v: Value| {
            let p = weak.upgrade().ok_or("the run ended")?;
            let mut out = Payload::new();
            encode_attaching(&p, &v, &mut out).map_err(|e| e.to_string())?;
            Ok(out)
        },
        move |pay: Payload| {
            let p = w2.upgrade().ok_or("the run ended")?;
            decode_payload(&p, &pay)
        },
    )
}

/// Appends the bytes of `v` (every tensor's floats among them).
pub fn encode(procs: &Arc<Procs>, v: &Value, out: &mut Payload) -> Result<(), RuntimeError> {
    put(procs, v, out, false)
}

/// Like [`encode`], except that the memory of a large host tensor is
/// attached to `out` (shared, not copied): for a payload sent whole over
/// a remote channel; read it back with [`decode_payload`].
pub fn encode_attaching(
    procs: &Arc<Procs>,
    v: &Value,
    out: &mut Payload,
) -> Result<(), RuntimeError> {
    put(procs, v, out, true)
}

fn put(procs: &Arc<Procs>, v: &Value, out: &mut Payload, attach: bool) -> Result<(), RuntimeError> {
    let encode = |procs: &Arc<Procs>, v: &Value, out: &mut Payload| put(procs, v, out, attach);
    match v {
        Value::Int(i) => {
            out.push(INT);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Float(f) => {
            out.push(FLOAT);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Bool(b) => {
            out.push(BOOL);
            out.push(*b as u8);
        }
        Value::Str(s) => {
            out.push(STR);
            u64s(out, s.len());
            out.extend_from_slice(s);
        }
        Value::List(items) | Value::Struct(items) => {
            out.push(if matches!(v, Value::List(_)) {
                LIST
            } else {
                STRUCT
            });
            u64s(out, items.len());
            for x in items.iter() {
                encode(procs, x, out)?;
            }
        }
        Value::Chan(c) => {
            out.push(CHAN);
            encode_ty(&c.elem, out);
            let r = match (&c.ch, &c.far) {
                (Some(ch), _) => Some(export(procs, ch)),
                (None, Some(far)) => Some(far.r),
                (None, None) => None,
            };
            match r {
                Some(r) => {
                    out.push(1);
                    out.extend_from_slice(&r.to_bytes());
                }
                None => out.push(0),
            }
        }
        Value::Tensor(t) => {
            let data = match t.host_buffer() {
                Some(d) if t.device_name() == "cpu" => d,
                _ => return Err(RuntimeError::NoCrossing("a tensor on a device")),
            };
            let attached = attach && data.len() >= ATTACH_MIN && out.attach(data.clone());
            out.push(if attached { TENSOR_ATTACHED } else { TENSOR });
            u64s(out, t.dims().len());
            for d in t.dims() {
                u64s(out, *d);
            }
            if attached {
                return Ok(());
            }
            // Sized first (a large payload's buffer is then reused, see
            // weft_mpi's pool), then converted a block at a time.
            out.reserve(4 * data.len());
            let mut block = [0u8; 4096];
            for xs in data.chunks(block.len() / 4) {
                for (b, x) in block.chunks_exact_mut(4).zip(xs) {
                    b.copy_from_slice(&x.to_bits().to_le_bytes());
                }
                out.extend_from_slice(&block[..4 * xs.len()]);
            }
        }
        Value::Comm(None) => out.push(NIL_COMM),
        Value::Comm(Some(c)) => match **c {
            CommVal::World(_) => out.push(WORLD),
            CommVal::Group(_) => return Err(RuntimeError::NoCrossing("a comm of a group")),
        },
        Value::Map(m) if m.nil => out.push(NIL_MAP),
        Value::Map(m) => {
            out.push(MAP);
            u64s(out, m.entries.len());
            for (k, v) in m.entries.iter() {
                encode(procs, &k.0, out)?;
                encode(procs, v, out)?;
            }
        }
        Value::Func(None) => out.push(NIL_FUNC),
        Value::Func(Some(c)) => {
            out.push(FUNC);
            out.extend_from_slice(&c.func.to_le_bytes());
            u64s(out, c.captures.len());
            for x in c.captures.iter() {
                encode(procs, x, out)?;
            }
        }
    }
    Ok(())
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    /// The payload's attached buffers, taken in order.
    attached: &'a [Arc<Vec<f32>>],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or("truncated value")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn word(&mut self) -> Result<[u8; 8], String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(a)
    }

    fn len(&mut self) -> Result<usize, String> {
        usize::try_from(u64::from_le_bytes(self.word()?)).map_err(|_| "length".to_string())
    }

    fn ty(&mut self, depth: usize) -> Result<Ty, String> {
        if depth > MAX_DEPTH {
            return Err("type nested too deep".into());
        }
        Ok(match self.u8()? {
            0 => Ty::Int,
            1 => Ty::Float,
            2 => Ty::Bool,
            3 => Ty::Str,
            4 => Ty::Tensor,
            5 => Ty::Comm,
            6 => Ty::Chan(Arc::new(self.ty(depth + 1)?)),
            7 => Ty::List(Arc::new(self.ty(depth + 1)?)),
            8 => {
                let mut id = [0u8; 4];
                id.copy_from_slice(self.take(4)?);
                let n = self.len()?;
                let name = std::str::from_utf8(self.take(n)?).map_err(|_| "type name")?;
                Ty::Struct {
                    id: u32::from_le_bytes(id),
                    name: Arc::from(name),
                }
            }
            9 => {
                let k = self.ty(depth + 1)?;
                Ty::Map(Arc::new(k), Arc::new(self.ty(depth + 1)?))
            }
            10 => {
                let n = self.len()?;
                let sig = std::str::from_utf8(self.take(n)?).map_err(|_| "func type")?;
                Ty::Func(Arc::from(sig))
            }
            t => return Err(format!("unknown type tag {t}")),
        })
    }

    fn value(&mut self, procs: &Arc<Procs>, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("value nested too deep".into());
        }
        Ok(match self.u8()? {
            INT => Value::Int(i64::from_le_bytes(self.word()?)),
            FLOAT => Value::Float(f64::from_bits(u64::from_le_bytes(self.word()?))),
            BOOL => Value::Bool(self.u8()? != 0),
            STR => {
                let n = self.len()?;
                Value::bytes(self.take(n)?)
            }
            tag @ (LIST | STRUCT) => {
                let n = self.len()?;
                let mut items = Vec::with_capacity(n.min(self.b.len()));
                for _ in 0..n {
                    items.push(self.value(procs, depth + 1)?);
                }
                if tag == LIST {
                    Value::list(items)
                } else {
                    Value::Struct(Arc::new(items))
                }
            }
            CHAN => {
                let elem = Arc::new(self.ty(depth + 1)?);
                let (ch, far) = if self.u8()? == 0 {
                    (None, None)
                } else {
                    let r = ChanRef::from_bytes(self.take(ChanRef::BYTES)?)
                        .ok_or("channel reference")?;
                    if r.owner == procs.world.rank() {
                        let local = procs.local.lock().get(&r.id).cloned();
                        (
                            Some(local.ok_or("a channel this process never sent")?),
                            None,
                        )
                    } else {
                        let far = FarChan {
                            r,
                            procs: procs.clone(),
                        };
                        (None, Some(Box::new(far)))
                    }
                };
                Value::Chan(Arc::new(ChanVal {
                    ch,
                    elem,
                    far,
                    read_err: None,
                }))
            }
            tag @ (TENSOR | TENSOR_ATTACHED) => {
                let nd = self.len()?;
                let mut dims = Vec::with_capacity(nd.min(64));
                for _ in 0..nd {
                    dims.push(self.len()?);
                }
                let data = if tag == TENSOR {
                    let n = dims
                        .iter()
                        .try_fold(1usize, |a, d| a.checked_mul(*d))
                        .ok_or("tensor size")?;
                    let raw = self.take(n.checked_mul(4).ok_or("tensor size")?)?;
                    Arc::new(
                        raw.chunks_exact(4)
                            .map(|c| f32::from_bits(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                            .collect(),
                    )
                } else {
                    let (data, rest) = self
                        .attached
                        .split_first()
                        .ok_or("a tensor without its buffer")?;
                    self.attached = rest;
                    data.clone()
                };
                let t = Tensor::from_host_buffer(&dims, data).map_err(|e| e.to_string())?;
                Value::Tensor(Arc::new(t))
            }
            WORLD => Value::Comm(Some(Arc::new(CommVal::World(procs.clone())))),
            NIL_COMM => Value::Comm(None),
            NIL_MAP => MapVal::nil_value(),
            MAP => {
                let n = self.len()?;
                let mut m = MapVal::default();
                m.entries.reserve(n.min(self.b.len()));
                for _ in 0..n {
                    let k = self.value(procs, depth + 1)?;
                    let v = self.value(procs, depth + 1)?;
                    if m.entries.insert(Key(k), v).is_some() {
                        return Err("a map key twice".into());
                    }
                }
                Value::Map(Arc::new(m))
            }
            NIL_FUNC => Value::Func(None),
            FUNC => {
                let mut func = [0u8; 4];
                func.copy_from_slice(self.take(4)?);
                let n = self.len()?;
                let mut captures = Vec::with_capacity(n.min(self.b.len()));
                for _ in 0..n {
                    captures.push(self.value(procs, depth + 1)?);
                }
                Value::Func(Some(Arc::new(Closure {
                    func: u32::from_le_bytes(func),
                    captures: captures.into_boxed_slice(),
                })))
            }
            t => return Err(format!("unknown value tag {t}")),
        })
    }
}

/// Reads a value written by [`encode`].
pub fn decode(procs: &Arc<Procs>, b: &[u8]) -> Result<Value, String> {
    read(procs, b, &[])
}

/// Reads a value written by [`encode_attaching`] (a tensor's memory
/// becomes the new tensor's: not copied).
pub fn decode_payload(procs: &Arc<Procs>, p: &Payload) -> Result<Value, String> {
    read(procs, p.as_slice(), p.attached())
}

fn read(procs: &Arc<Procs>, b: &[u8], attached: &[Arc<Vec<f32>>]) -> Result<Value, String> {
    let mut r = Reader { b, at: 0, attached };
    let v = r.value(procs, 0)?;
    if r.at != b.len() {
        return Err("trailing bytes after a value".into());
    }
    if !r.attached.is_empty() {
        return Err("attached buffers left after a value".into());
    }
    Ok(v)
}

fn broken(e: impl std::fmt::Display) -> RuntimeError {
    InternalError::CrossProcess(e.to_string().into()).into()
}

/// A value to send to another process: a tensor on a device is copied to
/// the host first.
async fn to_host(v: Value, mem: Ceiling) -> Result<Value, RuntimeError> {
    match v {
        Value::Tensor(t) if t.device_name() != "cpu" => {
            let _hold = runtime::external_wait();
            tensor_ops::run(
                TensorOp::To,
                vec![Value::Tensor(t), Value::str("cpu")],
                mem,
                tensor_ops::Place {
                    here: "cpu",
                    strict: false,
                },
            )
            .await
        }
        v => Ok(v),
    }
}

/// Waits forever: the program is ending and the request will not be
/// answered (the run stops this task).
async fn ended<T>() -> T {
    std::future::pending().await
}

/// `far <- v`.
pub async fn send(far: &FarChan, v: Value, mem: Ceiling) -> Result<(), RuntimeError> {
    let v = to_host(v, mem).await?;
    let mut p = Payload::new();
    encode_attaching(&far.procs, &v, &mut p)?;
    match far.procs.world.send(far.r, p).await {
        Ok(()) => Ok(()),
        Err(RemoteError::Closed) => Err(RuntimeError::SendOnClosed),
        Err(RemoteError::Ended) => ended().await,
        Err(e) => Err(broken(e)),
    }
}

/// `<-far`: the value, or `None` once it is closed and drained.
pub async fn recv(far: &FarChan) -> Result<Option<Value>, RuntimeError> {
    match far.procs.world.recv(far.r).await {
        Ok(Some(p)) => decode_payload(&far.procs, &p).map(Some).map_err(broken),
        Ok(None) => Ok(None),
        Err(RemoteError::Ended) => ended().await,
        Err(e) => Err(broken(e)),
    }
}

/// `close(far)`.
pub async fn close(far: &FarChan) -> Result<(), RuntimeError> {
    match far.procs.world.close(far.r).await {
        Ok(()) => Ok(()),
        Err(RemoteError::Closed) => Err(RuntimeError::CloseOfClosed),
        Err(RemoteError::Ended) => ended().await,
        Err(e) => Err(broken(e)),
    }
}

/// A collective over `world()`: values as bytes, tensors as they are.
pub async fn world_call(
    procs: &Arc<Procs>,
    op: weft_coll::Op,
    ty: std::borrow::Cow<'static, str>,
    data: Data<Value>,
) -> Result<Outcome<Value>, RuntimeError> {
    let bytes = |v: &Value| -> Result<Vec<u8>, RuntimeError> {
        let mut p = Payload::new();
        encode(procs, v, &mut p)?;
        Ok(p.as_slice().to_vec())
    };
    let data = match data {
        Data::Int(i) => Data::Int(i),
        Data::Float(f) => Data::Float(f),
        Data::F32 { shape, data } => Data::F32 { shape, data },
        Data::F32s(parts) => Data::F32s(parts),
        Data::Value(v) => Data::Value(bytes(&v)?),
        Data::Shaped { shape, value } => Data::Shaped {
            shape,
            value: bytes(&value)?,
        },
        Data::Unit => Data::Unit,
    };
    let out = match procs.world.call(op, ty, data).await {
        Ok(o) => o,
        Err(weft_mpi::CallError::Coll(e)) => return Err(e.into()),
        Err(e) => return Err(broken(e)),
    };
    let value = |b: &[u8]| decode(procs, b).map_err(broken);
    Ok(match out {
        Outcome::Int(i) => Outcome::Int(i),
        Outcome::Float(f) => Outcome::Float(f),
        Outcome::F32 { shape, data } => Outcome::F32 { shape, data },
        Outcome::F32s(parts) => Outcome::F32s(parts),
        Outcome::Value(b) => Outcome::Value(value(&b)?),
        Outcome::Gathered(list) => {
            let vals = list
                .iter()
                .map(|b| value(b))
                .collect::<Result<Vec<_>, _>>()?;
            Outcome::Gathered(Arc::new(vals))
        }
        Outcome::Unit => Outcome::Unit,
    })
}

/// The process's side of `weft_mpi::Host`: ends this process's run as the
/// world says, and lists its blocked tasks for the deadlock report.
#[derive(Default)]
pub struct ProcHost {
    state: Mutex<(Option<RunControl>, Option<End>)>,
}

impl ProcHost {
    /// Called by `main`'s task when the run starts.
    pub fn set_control(&self, c: RunControl) {
        let mut s = self.state.lock();
        if let Some(end) = &s.1 {
            c.end(rt_outcome(end));
        }
        s.0 = Some(c);
    }

    /// How the world ended the program, if it did.
    pub fn ended(&self) -> Option<End> {
        self.state.lock().1.clone()
    }
}

fn rt_outcome(end: &End) -> runtime::RunOutcome {
    match end {
        End::Finished => runtime::RunOutcome::Returned,
        End::Abort { code, .. } => runtime::RunOutcome::Exit(*code),
        End::Deadlock { .. } => runtime::RunOutcome::Exit(2),
    }
}

impl Host for ProcHost {
    fn blocked(&self) -> Vec<String> {
        let c = self.state.lock().0.clone();
        c.map(|c| {
            c.blocked_tasks()
                .iter()
                .map(|b| format!("task {} [{}]: {}", b.task, b.kind, b.loc))
                .collect()
        })
        .unwrap_or_default()
    }

    fn end(&self, why: End) {
        let mut s = self.state.lock();
        if let Some(c) = &s.0 {
            c.end(rt_outcome(&why));
        }
        s.1 = Some(why);
    }
}

/// The runtime's quiescence, told to the world's detector.
pub struct Quiet(pub World);

impl runtime::Quiescence for Quiet {
    fn changed(&self, quiescent: bool) {
        self.0.set_quiescent(quiescent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_tensor_reads_back_bitwise() {
        let p = procs(World::solo());
        // More than one conversion block, and not a whole number of them.
        let data: Vec<f32> = (0..3001u32)
            .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761)))
            .collect();
        let t = Tensor::from_host_buffer(&[3001], Arc::new(data.clone())).expect("a tensor");
        let mut out = Payload::new();
        encode(&p, &Value::Tensor(Arc::new(t)), &mut out).expect("encodes");
        match decode(&p, out.as_slice()).expect("decodes") {
            Value::Tensor(t) => {
                let back = t.host_buffer().expect("on the host");
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&back), bits(&data));
            }
            other => panic!("{}", other.to_display()),
        }
    }

    #[test]
    fn a_large_tensor_is_attached_and_comes_back_sharing_its_memory() {
        let p = procs(World::solo());
        let data: Vec<f32> = (0..ATTACH_MIN + 3)
            .map(|i| f32::from_bits(0x3f80_0000 ^ i as u32))
            .collect();
        let big = Arc::new(data);
        let t = Tensor::from_host_buffer(&[ATTACH_MIN + 3], big.clone()).expect("a tensor");
        let small =
            Tensor::from_host_buffer(&[2], Arc::new(vec![1.5, f32::NAN])).expect("a tensor");
        let v = Value::Struct(Arc::new(vec![
            Value::Int(7),
            Value::Tensor(Arc::new(t.clone())),
            Value::list(vec![
                Value::Tensor(Arc::new(small)),
                Value::Tensor(Arc::new(t)),
            ]),
        ]));
        let mut out = Payload::new();
        encode_attaching(&p, &v, &mut out).expect("encodes");
        assert_eq!(
            out.attached().len(),
            2,
            "the large tensor twice, the small one inline"
        );
        assert!(out.len() < 200, "no floats in the bytes: {}", out.len());
        let back = decode_payload(&p, &out).expect("decodes");
        let Value::Struct(items) = &back else {
            panic!("{back:?}")
        };
        let Value::Tensor(t) = &items[1] else {
            panic!("{back:?}")
        };
        let got = t.host_buffer().expect("on the host");
        assert!(Arc::ptr_eq(&got, &big), "the memory is shared, not copied");
        // Without the attachments the bytes do not read.
        assert!(decode(&p, out.as_slice()).is_err());
        // Plain encoding (collectives) serializes the floats.
        let mut plain = Payload::new();
        encode(&p, &v, &mut plain).expect("encodes");
        assert!(plain.attached().is_empty());
        let back2 = decode(&p, plain.as_slice()).expect("decodes");
        let (Value::Struct(a), Value::Struct(b)) = (&back, &back2) else {
            panic!()
        };
        for (x, y) in a.iter().zip(b.iter()) {
            if let (Value::Tensor(x), Value::Tensor(y)) = (x, y) {
                let (x, y) = (x.host_buffer().expect("h"), y.host_buffer().expect("h"));
                assert!(x
                    .iter()
                    .zip(y.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits()));
            }
        }
    }

    #[test]
    fn values_read_back() {
        let p = procs(World::solo());
        let t = Tensor::from_host_buffer(&[2, 2], Arc::new(vec![1.0, -0.0, f32::NAN, 4.5]))
            .expect("a tensor");
        let v = Value::list(vec![
            Value::Int(-3),
            Value::Float(0.1),
            Value::Bool(true),
            Value::str("héllo"),
            Value::Struct(Arc::new(vec![Value::Int(1), Value::empty_str()])),
            Value::Tensor(Arc::new(t)),
            Value::Comm(None),
            Value::bytes(b"\xff\x00not utf-8"),
            Value::Func(None),
        ]);
        let mut out = Payload::new();
        encode(&p, &v, &mut out).expect("encodes");
        let back = decode(&p, out.as_slice()).expect("decodes");
        assert_eq!(back.to_display(), v.to_display());
        match &back {
            Value::List(items) => match &items[7] {
                Value::Str(s) => assert_eq!(&s[..], b"\xff\x00not utf-8"),
                other => panic!("not a string: {other:?}"),
            },
            other => panic!("not a list: {other:?}"),
        }
        assert!(decode(&p, &out.as_slice()[..out.len() - 1]).is_err());
        assert!(decode(&p, &[]).is_err());
    }

    #[test]
    fn a_map_crosses_in_its_insertion_order() {
        let p = procs(World::solo());
        let mut m = MapVal::default();
        for (k, v) in [("b", 2), ("a", 1), ("c", 3)] {
            m.entries
                .insert(Key(Value::str(k)), Value::list(vec![Value::Int(v)]));
        }
        let v = Value::Map(Arc::new(m));
        let mut out = Payload::new();
        encode(&p, &v, &mut out).expect("encodes");
        let back = decode(&p, out.as_slice()).expect("decodes");
        assert_eq!(back.to_display(), "map[a:[1] b:[2] c:[3]]");
        let Value::Map(b) = &back else {
            panic!("not a map: {back:?}")
        };
        let keys: Vec<String> = b.entries.keys().map(|k| k.0.to_display()).collect();
        assert_eq!(keys, ["b", "a", "c"]);
        assert!(b.entries.contains_key(&Key(Value::str("c"))));
        // a key twice is refused
        let mut twice = Payload::new();
        twice.push(MAP);
        u64s(&mut twice, 2);
        for _ in 0..2 {
            encode(&p, &Value::Int(1), &mut twice).expect("encodes");
            encode(&p, &Value::Int(2), &mut twice).expect("encodes");
        }
        assert!(decode(&p, twice.as_slice()).is_err());
        // a nil map stays nil, an empty one stays not nil
        for v in [MapVal::nil_value(), Value::Map(Arc::default())] {
            let mut out = Payload::new();
            encode(&p, &v, &mut out).expect("encodes");
            let back = decode(&p, out.as_slice()).expect("decodes");
            let (Value::Map(a), Value::Map(b)) = (&v, &back) else {
                panic!("not a map: {back:?}")
            };
            assert_eq!(a.nil, b.nil);
        }
    }

    #[test]
    fn a_func_value_crosses_as_its_function_and_captures() {
        let p = procs(World::solo());
        let v = Value::Func(Some(Arc::new(Closure {
            func: 7,
            captures: vec![Value::Int(3), Value::str("x")].into_boxed_slice(),
        })));
        let mut out = Payload::new();
        encode(&p, &v, &mut out).expect("encodes");
        let back = decode(&p, out.as_slice()).expect("decodes");
        let Value::Func(Some(c)) = &back else {
            panic!("not a func: {back:?}")
        };
        assert_eq!(c.func, 7);
        assert_eq!(c.captures.len(), 2);
        assert_eq!(c.captures[1].to_display(), "x");
        let t = Ty::Map(
            Arc::new(Ty::Str),
            Arc::new(Ty::Func("func(int) bool".into())),
        );
        let mut ty = Payload::new();
        encode_ty(&t, &mut ty);
        let mut r = Reader {
            b: ty.as_slice(),
            at: 0,
            attached: &[],
        };
        assert_eq!(r.ty(0).expect("reads"), t);
    }

    #[test]
    fn a_channel_comes_back_as_itself() {
        let p = procs(World::solo());
        let ch = Chan::<Value>::new(3);
        let v = Value::Chan(Arc::new(ChanVal {
            ch: Some(ch.clone()),
            elem: Arc::new(Ty::List(Arc::new(Ty::Int))),
            far: None,
            read_err: None,
        }));
        let mut out = Payload::new();
        encode(&p, &v, &mut out).expect("encodes");
        let back = decode(&p, out.as_slice()).expect("decodes");
        assert!(super::super::value::values_equal(&back, &v));
        assert_eq!(back.to_display(), "chan []int(cap 3)");
    }
}
