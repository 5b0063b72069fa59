//! A channel bounded by bytes in flight rather than by messages: a reader
//! may run ahead of the merge by many small parts (so that both readers
//! stay busy while the merge waits on one side) but never by more than the
//! budget, whatever the size of the parts.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

/// What a message weighs against the channel's budget, in bytes.
pub(crate) trait Weight {
    /// Bytes the message holds, roughly.
    fn weight(&self) -> usize;
}

struct Budget {
    /// Bytes in flight, and whether the receiver is gone.
    state: Mutex<(usize, bool)>,
    cv: Condvar,
    cap: usize,
}

/// The sending half.
pub(crate) struct Sender<T> {
    tx: mpsc::Sender<T>,
    budget: Arc<Budget>,
}

/// The receiving half; dropping it releases a waiting sender.
pub(crate) struct Receiver<T> {
    rx: mpsc::Receiver<T>,
    budget: Arc<Budget>,
}

/// A channel holding at most `cap` bytes of events (and always at least
/// one event).
pub(crate) fn channel<T: Weight>(cap: usize) -> (Sender<T>, Receiver<T>) {
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
    pub(crate) fn send(&self, ev: T) -> Result<(), ()> {
        let n = ev.weight();
        {
            let b = &self.budget;
            let mut s = b.state.lock().map_err(|_| ())?;
            while !s.1 && s.0 > 0 && s.0 + n > b.cap {
                s = b.cv.wait(s).map_err(|_| ())?;
            }
            if s.1 {
                return Err(());
            }
            s.0 += n;
        }
        self.tx.send(ev).map_err(|_| ())
    }
}

impl<T: Weight> Receiver<T> {
    /// The next event; `Err` when the sender is gone.
    pub(crate) fn recv(&self) -> Result<T, mpsc::RecvError> {
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
