//! Port of golang/go `test/chan/select.go`: a select with `default` over
//! send cases on buffered channels; a case whose channel was set to nil
//! never fires again, and every select evaluates all of its send values.

use weft_chan::{Chan, Outcome, Select};

struct Values {
    counter: u32,
    shift: u32,
}

impl Values {
    fn get(&mut self) -> u32 {
        self.counter += 1;
        1 << self.shift
    }
}

/// Sends on `a` and `b` until neither is ready; returns how many sends.
fn send(vals: &mut Values, mut a: Option<Chan<u32>>, mut b: Option<Chan<u32>>) -> u32 {
    let mut rng = fastrand::Rng::with_seed(u64::from(vals.counter));
    let mut i = 0;
    loop {
        let mut s = Select::new();
        let ca = s.send(a.clone(), vals.get());
        let cb = s.send(b.clone(), vals.get());
        match s.try_select(&mut rng) {
            Some(sel) if sel.index == ca && sel.outcome == Outcome::Sent => {
                i += 1;
                a = None;
            }
            Some(sel) if sel.index == cb && sel.outcome == Outcome::Sent => {
                i += 1;
                b = None;
            }
            Some(sel) => panic!("unexpected {sel:?}"),
            None => break,
        }
        vals.shift += 1;
    }
    i
}

#[test]
fn select() {
    let mut vals = Values {
        counter: 0,
        shift: 0,
    };
    let a = Chan::new(1);
    let b = Chan::new(1);
    assert_eq!(send(&mut vals, Some(a.clone()), Some(b.clone())), 2);
    let (av, bv) = (a.try_recv().unwrap(), b.try_recv().unwrap());
    assert_eq!(av | bv, 3, "bad values {av} {bv}");
    assert_eq!(send(&mut vals, Some(a), None), 1);
    assert_eq!(vals.counter, 10);
}
