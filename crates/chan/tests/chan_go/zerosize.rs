//! Port of golang/go `test/chan/zerosize.go`: channels of zero-sized
//! elements, buffered and unbuffered, work.

use weft_chan::Chan;

#[test]
fn zerosize() {
    let a = Chan::<[u8; 0]>::new(0);
    let b = Chan::<[u8; 0]>::new(1);
    let c = Chan::<()>::new(0);
    let d = Chan::<()>::new(1);
    b.try_send([]).unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b.recv_blocking(), Some([]));
    d.try_send(()).unwrap();
    assert_eq!(d.recv_blocking(), Some(()));
    let t = std::thread::spawn({
        let (a, c) = (a.clone(), c.clone());
        move || {
            a.send_blocking([]).unwrap();
            c.send_blocking(()).unwrap();
        }
    });
    assert_eq!(a.recv_blocking(), Some([]));
    assert_eq!(c.recv_blocking(), Some(()));
    t.join().unwrap();
}
