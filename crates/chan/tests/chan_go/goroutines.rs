//! Port of golang/go `test/chan/goroutines.go`: a chain of many tasks, each
//! passing one value from its right neighbour to its left; the value sent
//! into the right end comes out of the left end.

use weft_chan::Chan;

use crate::{run, Go};

const N: usize = 10_000;

async fn f(left: Chan<i32>, right: Chan<i32>) {
    if let Some(v) = right.recv().await {
        left.send(v).await.unwrap();
    }
}

#[test]
fn goroutines() {
    run(|go: Go| async move {
        let leftmost = Chan::new(0);
        let mut right = leftmost.clone();
        let mut left = leftmost.clone();
        for _ in 0..N {
            right = Chan::new(0);
            go.go(f(left, right.clone()));
            left = right.clone();
        }
        go.go(async move { right.send(1).await.unwrap() });
        assert_eq!(leftmost.recv().await, Some(1));
    });
}
