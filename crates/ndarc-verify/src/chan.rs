//! A channel bounded by bytes in flight rather than by messages: a sender
//! may run ahead of its receiver by many small messages but never by more
//! than the budget, whatever their size. The diff's readers run ahead of
//! its merge this way (`ndarc-diff`), and the verifier's lines ahead of a
//! [`crate::Reader`] on another thread (`crate::read`).

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

/// What a message weighs against the channel's budget, in bytes.
pub trait Weight {
    /// Bytes the message holds, roughly.
    fn weight(&self) -> usize;
}

struct Budget {
    /// Bytes in flight, and whether the receiver is gone.
    state: Mutex<(usize, bool)>,
    cv: Condvar,
    cap: usize,
}

/// The receiver is gone: what [`Sender::send`] returns then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the receiving end of the channel is gone")]
pub struct Disconnected;

/// The sending half.
pub struct Sender<T> {
    tx: mpsc::Sender<T>,
    budget: Arc<Budget>,
}

/// The receiving half; dropping it releases a waiting sender.
pub struct Receiver<T> {
    rx: mpsc::Receiver<T>,
    budget: Arc<Budget>,
}

/// A channel holding at most `cap` bytes of events (and always at least
/// one event).
pub fn channel<T: Weight>(cap: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::channel();
    let budget = Arc::new(Budget {
        state: Mutex::new((0, false)),
        cv: Condvar::new(),
        cap,
    });
    (
        Sender {
            tx,
            budget: budget.clone(),
        },
        Receiver { rx, budget },
    )
}

impl<T: Weight> Sender<T> {
    /// Sends `ev`, waiting while the budget is spent; `Err` when the
    /// receiver is gone.
    pub fn send(&self, ev: T) -> Result<(), Disconnected> {
        let n = ev.weight();
        {
            let b = &self.budget;
            let mut s = b.state.lock().map_err(|_| Disconnected)?;
            while !s.1 && s.0 > 0 && s.0 + n > b.cap {
                s = b.cv.wait(s).map_err(|_| Disconnected)?;
            }
            if s.1 {
                return Err(Disconnected);
            }
            s.0 += n;
        }
        self.tx.send(ev).map_err(|_| Disconnected)
    }
}

impl<T: Weight> Receiver<T> {
    /// The next event; `Err` when the sender is gone.
    pub fn recv(&self) -> Result<T, mpsc::RecvError> {
        let ev = self.rx.recv()?;
        let n = ev.weight();
        if let Ok(mut s) = self.budget.state.lock() {
            s.0 = s.0.saturating_sub(n);
        }
        self.budget.cv.notify_all();
        Ok(ev)
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        if let Ok(mut s) = self.budget.state.lock() {
            s.1 = true;
        }
        self.budget.cv.notify_all();
    }
}
