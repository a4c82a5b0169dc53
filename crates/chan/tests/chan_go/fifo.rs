//! Port of golang/go `test/chan/fifo.go`: buffered channels are FIFO
//! (`AsynchFifo`), and an unbuffered channel read by a daisy chain of
//! tasks, each released by the previous one, delivers in order (`SynchFifo`).

use weft_chan::Chan;

use crate::{run, Go};

const N: i32 = 10;

#[test]
fn asynch_fifo() {
    let ch = Chan::new(N as usize);
    for i in 0..N {
        ch.try_send(i).unwrap();
    }
    for i in 0..N {
        assert_eq!(ch.recv_blocking(), Some(i), "bad receive");
    }
}

async fn chain(ch: Chan<i32>, val: i32, input: Chan<i32>, out: Chan<i32>) {
    input.recv().await;
    assert_eq!(ch.recv().await, Some(val));
    out.send(1).await.unwrap();
}

#[test]
fn synch_fifo() {
    run(|go: Go| async move {
        let ch = Chan::new(0);
        let start = Chan::new(0);
        let mut input = start.clone();
        for i in 0..N {
            let out = Chan::new(0);
            go.go(chain(ch.clone(), i, input, out.clone()));
            input = out;
        }
        start.send(0).await.unwrap();
        for i in 0..N {
            ch.send(i).await.unwrap();
        }
        input.recv().await;
    });
}
