//! Model-based property tests: random groups run random sequences of
//! collectives on random values, each member a task on `weft-rt` with a
//! random number of workers and seed (and random yields between calls),
//! and every member's results are compared, bitwise, with a sequential
//! reference written plainly here. The tuning of the small/sliced
//! boundary is random too, so that small tensors take the sliced path;
//! one test uses the default chunk size with tensors of up to 40000
//! elements on both sides of the boundary.
//! Mismatched calls must fail with exactly the messages of
//! docs/language.md, on one member.

use std::borrow::Cow;
use std::sync::Arc;

use proptest::prelude::*;
use weft_chan::Chan;
use weft_coll::{group_tuned, CollError, Data, F32Part, Member, Op, Outcome, Reduce, Tuning};
use weft_rt::{Config, RunOutcome, Runtime, TaskEnd};

/// The caller's own value type in these tests.
type V = String;

/// One member's value at one step.
#[derive(Clone, Debug)]
enum Val {
    Int(i64),
    Float(f64),
    Tensor(Vec<usize>, Vec<f32>),
    /// A list of tensors (`Data::F32s`).
    Tensors(Vec<(Vec<usize>, Vec<f32>)>),
    Str(String),
    /// A string that must agree on a shape (`Data::Shaped`).
    Shaped(Vec<usize>, String),
    Unit,
}

impl Val {
    fn ty(&self) -> &'static str {
        match self {
            Val::Int(_) => "int",
            Val::Float(_) => "float",
            Val::Tensor(..) | Val::Shaped(..) => "tensor",
            Val::Tensors(_) => "[]tensor",
            Val::Str(_) => "string",
            Val::Unit => "unit",
        }
    }

    fn data(&self) -> Data<V> {
        match self {
            Val::Int(x) => Data::Int(*x),
            Val::Float(x) => Data::Float(*x),
            Val::Tensor(s, d) => Data::F32 {
                shape: Arc::from(s.as_slice()),
                data: Arc::new(d.clone()),
            },
            Val::Tensors(ts) => Data::F32s(
                ts.iter()
                    .map(|(s, d)| F32Part {
                        shape: Arc::from(s.as_slice()),
                        data: Arc::new(d.clone()),
                    })
                    .collect(),
            ),
            Val::Str(s) => Data::Value(s.clone()),
            Val::Shaped(s, v) => Data::Shaped {
                shape: Arc::from(s.as_slice()),
                value: v.clone(),
            },
            Val::Unit => Data::Unit,
        }
    }
}

/// What a member got, in a comparable form (floats as bits).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Got {
    Int(i64),
    Float(u64),
    Tensor(Vec<usize>, Vec<u32>),
    Tensors(Vec<(Vec<usize>, Vec<u32>)>),
    Value(String),
    Gathered(Vec<String>),
    Unit,
}

fn got(o: &Outcome<V>) -> Got {
    match o {
        Outcome::Int(x) => Got::Int(*x),
        Outcome::Float(x) => Got::Float(x.to_bits()),
        Outcome::F32 { shape, data } => {
            Got::Tensor(shape.to_vec(), data.iter().map(|x| x.to_bits()).collect())
        }
        Outcome::F32s(parts) => Got::Tensors(
            parts
                .iter()
                .map(|p| {
                    (
                        p.shape.to_vec(),
                        p.data.iter().map(|x| x.to_bits()).collect(),
                    )
                })
                .collect(),
        ),
        Outcome::Value(v) => Got::Value(v.clone()),
        Outcome::Gathered(vs) => Got::Gathered(vs.to_vec()),
        Outcome::Unit => Got::Unit,
    }
}

/// A member's results: each step's, with its tensor buffer if any (to
/// check that members share it).
type Results = Vec<(Got, Option<Arc<Vec<f32>>>)>;

/// One step: the op and every member's value, by rank.
#[derive(Clone, Debug)]
struct Step {
    op: Op,
    vals: Vec<Val>,
}

// ---- the reference: one step at a time, element by element, in rank order ----

fn ref_f64(op: Reduce, a: f64, b: f64) -> f64 {
    match op {
        Reduce::Sum => a + b,
        Reduce::Prod => a * b,
        // docs/collectives.md: a NaN wins; ties keep the lower rank's value.
        Reduce::Max => {
            if b.is_nan() || b > a {
                b
            } else {
                a
            }
        }
        Reduce::Min => {
            if b.is_nan() || b < a {
                b
            } else {
                a
            }
        }
    }
}

fn ref_f32(op: Reduce, a: f32, b: f32) -> f32 {
    match op {
        Reduce::Sum => a + b,
        Reduce::Prod => a * b,
        Reduce::Max => {
            if b.is_nan() || b > a {
                b
            } else {
                a
            }
        }
        Reduce::Min => {
            if b.is_nan() || b < a {
                b
            } else {
                a
            }
        }
    }
}

fn ref_i64(op: Reduce, a: i64, b: i64) -> i64 {
    match op {
        Reduce::Sum => a.wrapping_add(b),
        Reduce::Prod => a.wrapping_mul(b),
        Reduce::Max => a.max(b),
        Reduce::Min => a.min(b),
    }
}

fn reference(step: &Step) -> Got {
    let vals = &step.vals;
    match step.op {
        Op::Barrier => Got::Unit,
        Op::Broadcast { root } => got(&match vals[root].data() {
            Data::Int(x) => Outcome::Int(x),
            Data::Float(x) => Outcome::Float(x),
            Data::F32 { shape, data } => Outcome::F32 { shape, data },
            Data::F32s(parts) => Outcome::F32s(parts.into()),
            Data::Value(v) | Data::Shaped { value: v, .. } => Outcome::Value(v),
            Data::Unit => Outcome::Unit,
        }),
        Op::AllGather => Got::Gathered(
            vals.iter()
                .map(|v| match v {
                    Val::Str(s) | Val::Shaped(_, s) => s.clone(),
                    _ => unreachable!("gather of strings only"),
                })
                .collect(),
        ),
        Op::AllReduce(r) => match &vals[0] {
            Val::Int(_) => {
                let mut acc = None;
                for v in vals {
                    let Val::Int(x) = v else { unreachable!() };
                    acc = Some(acc.map_or(*x, |a| ref_i64(r, a, *x)));
                }
                Got::Int(acc.unwrap())
            }
            Val::Float(_) => {
                let mut acc = None;
                for v in vals {
                    let Val::Float(x) = v else { unreachable!() };
                    acc = Some(acc.map_or(*x, |a| ref_f64(r, a, *x)));
                }
                Got::Float(acc.unwrap().to_bits())
            }
            Val::Tensor(shape, first) => {
                let mut out = first.clone();
                for v in &vals[1..] {
                    let Val::Tensor(_, x) = v else { unreachable!() };
                    for (o, &b) in out.iter_mut().zip(x) {
                        *o = ref_f32(r, *o, b);
                    }
                }
                Got::Tensor(shape.clone(), out.iter().map(|x| x.to_bits()).collect())
            }
            Val::Tensors(first) => {
                // Each part like a tensor alone.
                let mut out: Vec<(Vec<usize>, Vec<f32>)> = first.clone();
                for v in &vals[1..] {
                    let Val::Tensors(x) = v else { unreachable!() };
                    for ((_, o), (_, d)) in out.iter_mut().zip(x) {
                        for (o, &b) in o.iter_mut().zip(d) {
                            *o = ref_f32(r, *o, b);
                        }
                    }
                }
                Got::Tensors(
                    out.into_iter()
                        .map(|(s, d)| (s, d.iter().map(|x| x.to_bits()).collect()))
                        .collect(),
                )
            }
            _ => unreachable!("reduce of numbers only"),
        },
    }
}

// ---- running a scenario on weft-rt ----

/// One member's results, step by step: what it got and the tensor data it
/// saw, or the error it met.
type MemberResults = Result<Results, String>;

/// Runs `steps` on a group of `n` (one task per member) and returns each
/// member's results by rank, or the errors members saw.
fn run(
    n: usize,
    tuning: Tuning,
    workers: usize,
    seed: u64,
    steps: Arc<Vec<Step>>,
    yields: Arc<Vec<Vec<u8>>>,
) -> Vec<MemberResults> {
    let members = group_tuned::<V>(n, 1 + (seed as usize % 3), tuning).unwrap();
    let results = Arc::new(std::sync::Mutex::new(vec![None; n]));
    let done = Chan::<()>::new(n);
    let rt = Runtime::new(Config {
        workers,
        seed,
        trace: None,
        max_tasks: None,
    });
    let res = results.clone();
    let outcome = rt.run(async move {
        for m in members {
            let (steps, yields, res, done) =
                (steps.clone(), yields.clone(), res.clone(), done.clone());
            weft_rt::spawn(async move {
                let r = member(&m, &steps, &yields[m.rank()]).await;
                res.lock().unwrap()[m.rank()] = Some(r);
                done.send(()).await.ok();
                TaskEnd::Returned
            })
            .unwrap();
        }
        for _ in 0..n {
            done.recv().await;
        }
        TaskEnd::Returned
    });
    assert_eq!(outcome, RunOutcome::Returned);
    let mut results = results.lock().unwrap();
    results.iter_mut().map(|r| r.take().unwrap()).collect()
}

/// One member's program: every step in order, yielding as told first.
async fn member(m: &Member<V>, steps: &[Step], yields: &[u8]) -> MemberResults {
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        for _ in 0..yields.get(i).copied().unwrap_or(0) {
            weft_rt::yield_now().await;
        }
        let v = &s.vals[m.rank()];
        let o = m
            .call(s.op, Cow::Borrowed(v.ty()), v.data())
            .await
            .map_err(|e| e.to_string())?;
        let buf = match &o {
            Outcome::F32 { data, .. } => Some(data.clone()),
            Outcome::F32s(parts) => parts.first().map(|p| p.data.clone()),
            _ => None,
        };
        out.push((got(&o), buf));
    }
    Ok(out)
}

// ---- strategies ----

fn f32_val() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => (-50i32..50).prop_map(|x| x as f32 * 0.25),
        2 => any::<f32>(),
        1 => prop::sample::select(vec![0.0f32, -0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY]),
    ]
}

fn f64_val() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (-50i32..50).prop_map(|x| x as f64 * 0.25),
        2 => any::<f64>(),
        1 => prop::sample::select(vec![0.0f64, -0.0, f64::NAN, f64::INFINITY]),
    ]
}

fn reduce_op() -> impl Strategy<Value = Reduce> {
    prop::sample::select(vec![Reduce::Sum, Reduce::Max, Reduce::Min, Reduce::Prod])
}

/// A shape with at most `max` elements (maybe none).
fn shape(max: usize) -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        Just(vec![]),
        (0..=max).prop_map(|a| vec![a]),
        (1..=8usize, 0..=max / 8).prop_map(|(a, b)| vec![a, b]),
        (1..=4usize, 1..=4usize, 0..=max / 16).prop_map(|(a, b, c)| vec![a, b, c]),
    ]
}

fn tensors(n: usize, max: usize) -> impl Strategy<Value = Vec<Val>> {
    shape(max).prop_flat_map(move |s| {
        let len = s.iter().product::<usize>();
        prop::collection::vec(prop::collection::vec(f32_val(), len), n)
            .prop_map(move |ds| ds.into_iter().map(|d| Val::Tensor(s.clone(), d)).collect())
    })
}

/// Lists of 0 to 3 tensors (the same shapes for every member).
fn lists(n: usize, max: usize) -> impl Strategy<Value = Vec<Val>> {
    prop::collection::vec(shape(max), 0..=3).prop_flat_map(move |shapes| {
        let one = shapes
            .iter()
            .map(|s| {
                let s = s.clone();
                prop::collection::vec(f32_val(), s.iter().product::<usize>())
                    .prop_map(move |d| (s.clone(), d))
            })
            .collect::<Vec<_>>();
        prop::collection::vec(one, n).prop_map(|ms| ms.into_iter().map(Val::Tensors).collect())
    })
}

/// A valid step for a group of `n`, tensors of at most `max` elements.
fn step(n: usize, max: usize) -> impl Strategy<Value = Step> {
    let any_vals = prop_oneof![
        prop::collection::vec(any::<i64>().prop_map(Val::Int), n),
        prop::collection::vec(f64_val().prop_map(Val::Float), n),
        tensors(n, max),
        lists(n, max),
        prop::collection::vec("[a-z]{0,4}".prop_map(Val::Str), n),
        (shape(6), prop::collection::vec("[a-z]{0,3}", n))
            .prop_map(|(s, vs)| vs.into_iter().map(|v| Val::Shaped(s.clone(), v)).collect()),
        Just(vec![Val::Unit; n]),
    ];
    let ints = prop_oneof![
        prop::collection::vec(any::<i64>().prop_map(Val::Int), n),
        prop::collection::vec((-3i64..4).prop_map(Val::Int), n),
    ];
    let nums = prop_oneof![
        1 => ints,
        1 => prop::collection::vec(f64_val().prop_map(Val::Float), n),
        3 => tensors(n, max),
        2 => lists(n, max),
    ];
    let strs = prop::collection::vec("[a-z]{0,4}".prop_map(Val::Str), n);
    prop_oneof![
        4 => (reduce_op(), nums).prop_map(|(r, vals)| Step { op: Op::AllReduce(r), vals }),
        2 => (0..n, any_vals).prop_map(|(root, vals)| Step { op: Op::Broadcast { root }, vals }),
        1 => strs.prop_map(|vals| Step { op: Op::AllGather, vals }),
        1 => Just(Step { op: Op::Barrier, vals: vec![Val::Unit; n] }),
    ]
}

#[derive(Clone, Debug)]
struct Scenario {
    n: usize,
    workers: usize,
    seed: u64,
    tuning: Tuning,
    steps: Vec<Step>,
    yields: Vec<Vec<u8>>,
}

fn scenario(max_elems: usize, tuned: bool) -> impl Strategy<Value = Scenario> {
    (
        1..=8usize,
        1..=4usize,
        any::<u64>(),
        1..=64usize,
        1..=40usize,
        1..=10usize,
    )
        .prop_flat_map(move |(n, workers, seed, small, chunk, len)| {
            let tuning = if tuned {
                Tuning {
                    small_elems: small,
                    chunk_elems: chunk,
                    progress: Some(weft_rt::release_lifo),
                    handoff: Some(weft_rt::hand_off_lifo),
                }
            } else {
                // Tensors of up to 40000 elements: groups of 2 and more
                // cross this boundary.
                Tuning {
                    small_elems: 65536,
                    progress: Some(weft_rt::release_lifo),
                    handoff: Some(weft_rt::hand_off_lifo),
                    ..Tuning::default()
                }
            };
            (
                prop::collection::vec(step(n, max_elems), len),
                prop::collection::vec(prop::collection::vec(0u8..3, len), n),
            )
                .prop_map(move |(steps, yields)| Scenario {
                    n,
                    workers,
                    seed,
                    tuning,
                    steps,
                    yields,
                })
        })
}

fn check(s: Scenario) {
    let want: Vec<Got> = s.steps.iter().map(reference).collect();
    let steps = Arc::new(s.steps.clone());
    let got = run(
        s.n,
        s.tuning,
        s.workers,
        s.seed,
        steps,
        Arc::new(s.yields.clone()),
    );
    let first = got[0].as_ref().unwrap();
    for (rank, g) in got.iter().enumerate() {
        let g = g
            .as_ref()
            .unwrap_or_else(|e| panic!("rank {rank} failed: {e}"));
        let values: Vec<Got> = g.iter().map(|(v, _)| v.clone()).collect();
        assert_eq!(values, want, "rank {rank}");
        // Every member's tensor result is one shared buffer.
        for (i, (_, buf)) in g.iter().enumerate() {
            if let (Some(a), Some(b)) = (buf, &first[i].1) {
                assert!(
                    Arc::ptr_eq(a, b),
                    "step {i}: rank {rank} has its own buffer"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Small tensors, with the small/sliced boundary and the chunk size
    /// random, so both paths run on every kind of step.
    #[test]
    fn collectives_match_the_reference(s in scenario(300, true)) {
        check(s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// The default chunk size, tensors of up to 40000 elements, and a
    /// boundary of 65536 elements in all, which groups of 2 and more cross.
    #[test]
    fn large_tensors_cross_the_boundary(s in scenario(40_000, false)) {
        check(s);
    }
}

// ---- mismatches ----

/// The message the last arriver must report for `vals`/`ops`, by the
/// rules of docs/language.md, or `None` when the step is consistent.
fn expected_error(ops: &[Op], vals: &[Val]) -> Option<String> {
    let name = |o: &Op| o.name();
    let same_kind = |a: &Op, b: &Op| match (a, b) {
        (Op::Broadcast { .. }, Op::Broadcast { .. }) => true,
        _ => a == b,
    };
    if let Some(r) = (1..ops.len()).find(|&r| !same_kind(&ops[r], &ops[0])) {
        return Some(format!(
            "collective mismatch: rank 0 called {}, rank {r} called {}",
            name(&ops[0]),
            name(&ops[r])
        ));
    }
    if let Op::Broadcast { root } = ops[0] {
        if let Some(r) = (1..ops.len()).find(|&r| ops[r] != ops[0]) {
            let Op::Broadcast { root: other } = ops[r] else {
                unreachable!()
            };
            return Some(format!(
                "broadcast: root mismatch: {root} (rank 0) vs {other} (rank {r})"
            ));
        }
    }
    if ops[0] == Op::Barrier {
        return None;
    }
    let op = name(&ops[0]);
    if let Some(r) = (1..vals.len()).find(|&r| vals[r].ty() != vals[0].ty()) {
        return Some(format!(
            "{op}: type mismatch: {} (rank 0) vs {} (rank {r})",
            vals[0].ty(),
            vals[r].ty()
        ));
    }
    let shape = |v: &Val| match v {
        Val::Tensor(s, _) | Val::Shaped(s, _) => Some(s.clone()),
        _ => None,
    };
    let dims = |s: &[usize]| {
        let parts: Vec<String> = s.iter().map(|d| d.to_string()).collect();
        format!("[{}]", parts.join(" "))
    };
    let shapes = |v: &Val| match v {
        Val::Tensors(ts) => Some(ts.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>()),
        _ => None,
    };
    if let Some(l0) = shapes(&vals[0]) {
        let list = |l: &[Vec<usize>]| {
            let parts: Vec<String> = l.iter().map(|s| dims(s)).collect();
            format!("[{}]", parts.join(" "))
        };
        if let Some(r) = (1..vals.len()).find(|&r| shapes(&vals[r]).as_ref() != Some(&l0)) {
            return Some(format!(
                "{op}: shape mismatch: {} (rank 0) vs {} (rank {r})",
                list(&l0),
                list(&shapes(&vals[r]).unwrap())
            ));
        }
    }
    if let Some(s0) = shape(&vals[0]) {
        if let Some(r) = (1..vals.len()).find(|&r| shape(&vals[r]).as_ref() != Some(&s0)) {
            return Some(format!(
                "{op}: shape mismatch: {} (rank 0) vs {} (rank {r})",
                dims(&s0),
                dims(&shape(&vals[r]).unwrap())
            ));
        }
    }
    None
}

/// A step where members may disagree: each member picks its op and value
/// from a few candidates (numbers of two types, tensors of two shapes).
fn bad_step(n: usize) -> impl Strategy<Value = (Vec<Op>, Vec<Val>)> {
    let op = prop_oneof![
        Just(Op::AllReduce(Reduce::Sum)),
        Just(Op::AllReduce(Reduce::Max)),
        (0..n).prop_map(|root| Op::Broadcast { root }),
        Just(Op::Barrier),
    ];
    let val = prop_oneof![
        Just(Val::Int(1)),
        Just(Val::Float(1.0)),
        Just(Val::Tensor(vec![2, 3], vec![1.0; 6])),
        Just(Val::Tensor(vec![3, 2], vec![1.0; 6])),
        Just(Val::Tensors(vec![
            (vec![2, 3], vec![1.0; 6]),
            (vec![4], vec![2.0; 4])
        ])),
        Just(Val::Tensors(vec![
            (vec![3, 2], vec![1.0; 6]),
            (vec![4], vec![2.0; 4])
        ])),
        Just(Val::Tensors(vec![(vec![2, 3], vec![1.0; 6])])),
    ];
    (
        prop::collection::vec((0..3usize, op), n),
        prop::collection::vec(val, n),
    )
        .prop_map(|(ops, vals)| {
            // Mostly agree with rank 0, so each check gets its turn.
            let ops: Vec<Op> = ops
                .iter()
                .map(|(k, o)| if *k == 0 { *o } else { ops[0].1 })
                .collect();
            (ops, vals)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// A consistent prefix of steps, then a step where members may
    /// disagree: exactly the expected message, from one member (the last
    /// to arrive), while the others stay parked; or, when the step is
    /// consistent, every member completes.
    #[test]
    fn mismatches_report_the_messages(
        (n, prefix, bad) in (2..=6usize).prop_flat_map(|n| {
            (Just(n), prop::collection::vec(step(n, 20), 0..3), bad_step(n))
        }),
        workers in 1..=3usize,
        seed in any::<u64>(),
    ) {
        let (ops, vals) = bad;
        let want = expected_error(&ops, &vals);
        let members = group_tuned::<V>(n, 1, Tuning { small_elems: 4, chunk_elems: 2, progress: None, handoff: None }).unwrap();
        let reports = Chan::<Result<(), String>>::new(n);
        let prefix = Arc::new(prefix);
        let (ops, vals) = (Arc::new(ops), Arc::new(vals));
        let rt = Runtime::new(Config { workers, seed, trace: None, max_tasks: None });
        let expect_error = want.is_some();
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let got2 = got.clone();
        let outcome = rt.run(async move {
            for m in members {
                let (prefix, ops, vals, reports) =
                    (prefix.clone(), ops.clone(), vals.clone(), reports.clone());
                weft_rt::spawn(async move {
                    let r = match member(&m, &prefix, &[]).await {
                        Err(e) => Err(format!("prefix failed: {e}")),
                        Ok(_) => {
                            let v = &vals[m.rank()];
                            m.call(ops[m.rank()], Cow::Borrowed(v.ty()), v.data())
                                .await
                                .map(|_| ())
                                .map_err(|e| e.to_string())
                        }
                    };
                    reports.send(r).await.ok();
                    TaskEnd::Returned
                })
                .unwrap();
            }
            // With an error, only the last arriver returns; the rest stay
            // parked and are dropped when main returns.
            let wanted = if expect_error { 1 } else { n };
            for _ in 0..wanted {
                if let Some(r) = reports.recv().await {
                    got2.lock().unwrap().push(r);
                }
            }
            TaskEnd::Returned
        });
        prop_assert_eq!(outcome, RunOutcome::Returned);
        let got = got.lock().unwrap().clone();
        match want {
            Some(msg) => prop_assert_eq!(got, vec![Err(msg)]),
            None => prop_assert_eq!(got, vec![Ok(()); n]),
        }
    }
}

#[test]
fn local_errors_need_no_rendezvous() {
    let g = group_tuned::<V>(4, 1, Tuning::default()).unwrap();
    let e = g[1]
        .call_blocking(Op::Broadcast { root: 5 }, "int".into(), Data::Int(1))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "broadcast: root 5 out of range for group of size 4"
    );
    assert_eq!(e, CollError::RootRange { root: 5, size: 4 });
    let e = g[0]
        .call_blocking(
            Op::AllReduce(Reduce::Sum),
            "string".into(),
            Data::Value("x".into()),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "allreduce_sum: cannot take a value of type string"
    );
    let e = g[0]
        .call_blocking(
            Op::AllReduce(Reduce::Sum),
            "tensor".into(),
            Data::F32 {
                shape: Arc::from([2, 2]),
                data: Arc::new(vec![0.0; 3]),
            },
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "allreduce_sum: tensor of shape [2 2] has 3 elements"
    );
    assert_eq!(
        weft_coll::group::<V>(0, 1).unwrap_err().to_string(),
        "group: size out of range"
    );
}
