//! A call's served time: how long the call has been running or waiting on what it asked for
//! (an import), not counting the time it was ready and waited for a core.
//!
//! It owns [`ServedClock`] and [`bounded`], the backstop's measure of a call. A call's deadline
//! is its fuel: the same work ends the same way on every machine. The backstop is for what fuel
//! cannot see (a guest parked in an import burns none), and it used to count wall-clock time,
//! so on a machine loaded enough that a ready call waited more than its deadline and margin for
//! a core, a call that would have answered was cut short: the same signals then made different
//! decisions on two hosts, and a fleet's takeover could not replay a journal. The clock counts
//! the time between a waker's wake and the next poll as starved, and the backstop (the epoch
//! callback while wasm runs, [`bounded`] around the whole call) measures only the rest. It must
//! not decide a call's outcome on its own: it only says how long the call has been served.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// No wake is pending.
const NOT_WOKEN: u64 = u64::MAX;

/// One call's served time, shared by its backstops.
#[derive(Debug)]
pub struct ServedClock {
    started: Instant,
    /// Nanoseconds the call waited for a core after a wake, summed.
    starved_ns: AtomicU64,
    /// When (ns after `started`) the call was woken and not yet polled, or [`NOT_WOKEN`].
    woken_at_ns: AtomicU64,
    /// The executor's waker of the task running the call.
    task: Mutex<Option<Waker>>,
}

impl ServedClock {
    /// A clock started now.
    pub fn start() -> Arc<Self> {
        Arc::new(Self {
            started: Instant::now(),
            starved_ns: AtomicU64::new(0),
            woken_at_ns: AtomicU64::new(NOT_WOKEN),
            task: Mutex::new(None),
        })
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// The time the call has been served so far.
    pub fn served(&self) -> Duration {
        let now = self.now_ns();
        let mut starved = self.starved_ns.load(Ordering::Acquire);
        let woken = self.woken_at_ns.load(Ordering::Acquire);
        if woken != NOT_WOKEN {
            starved = starved.saturating_add(now.saturating_sub(woken));
        }
        Duration::from_nanos(now.saturating_sub(starved))
    }

    /// A poll begins: the wait since the last wake was starvation.
    fn polled(&self, task: &Waker) {
        let woken = self.woken_at_ns.swap(NOT_WOKEN, Ordering::AcqRel);
        if woken != NOT_WOKEN {
            let waited = self.now_ns().saturating_sub(woken);
            self.starved_ns.fetch_add(waited, Ordering::AcqRel);
        }
        if let Ok(mut slot) = self.task.lock()
            && !slot.as_ref().is_some_and(|known| known.will_wake(task))
        {
            *slot = Some(task.clone());
        }
    }

    /// A poll returned pending: a wake that came during it counts from now, since the time in
    /// the poll was served.
    fn pending(&self) {
        if self.woken_at_ns.load(Ordering::Acquire) == NOT_WOKEN {
            return;
        }
        let now = self.now_ns();
        let _ = self
            .woken_at_ns
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |woken| {
                (woken != NOT_WOKEN && woken < now).then_some(now)
            });
    }
}

impl Wake for ServedClock {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let now = self.now_ns();
        let _ =
            self.woken_at_ns
                .compare_exchange(NOT_WOKEN, now, Ordering::AcqRel, Ordering::Acquire);
        let task = self.task.lock().ok().and_then(|slot| slot.clone());
        if let Some(task) = task {
            task.wake();
        }
    }
}

/// The backstop ran out: the call was served `backstop` and had not ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackstopElapsed;

/// Runs `call` until it ends or it has been served `backstop` on `clock` (its waits for a core
/// not counted).
///
/// `call` comes pinned where the caller keeps it: taken by value, it would sit in this
/// function's state twice (the argument and its pinned copy), and a call's state is the
/// sandbox's largest. So the caller also drops it: past the backstop, it is left unfinished.
pub async fn bounded<F: Future + ?Sized>(
    clock: &Arc<ServedClock>,
    backstop: Duration,
    mut call: Pin<&mut F>,
) -> Result<F::Output, BackstopElapsed> {
    let mut alarm = std::pin::pin!(tokio::time::sleep(backstop));
    let waker = Waker::from(clock.clone());
    std::future::poll_fn(|cx| {
        clock.polled(cx.waker());
        let mut served_cx = Context::from_waker(&waker);
        if let Poll::Ready(output) = call.as_mut().poll(&mut served_cx) {
            return Poll::Ready(Ok(output));
        }
        while alarm.as_mut().poll(&mut served_cx).is_ready() {
            let served = clock.served();
            if served >= backstop {
                return Poll::Ready(Err(BackstopElapsed));
            }
            alarm
                .as_mut()
                .reset(tokio::time::Instant::now() + (backstop - served));
        }
        clock.pending();
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_wait_for_a_core_is_not_served_time() {
        let clock = ServedClock::start();
        let backstop = Duration::from_millis(200);
        // The call yields (ready again at once), then the executor's only thread is held for
        // 400 ms by another task: the call waited, it was not served.
        let call = async {
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            "answered"
        };
        let hog = async {
            tokio::task::yield_now().await;
            std::thread::sleep(Duration::from_millis(400));
        };
        let call = std::pin::pin!(call);
        let (answer, ()) = tokio::join!(bounded(&clock, backstop, call), hog);
        assert_eq!(answer, Ok("answered"));
        assert!(clock.served() < backstop, "{:?}", clock.served());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_wait_on_what_the_call_asked_for_is_served_time() {
        let clock = ServedClock::start();
        let backstop = Duration::from_millis(100);
        let call = tokio::time::sleep(Duration::from_secs(30));
        let started = Instant::now();
        let outcome = bounded(&clock, backstop, std::pin::pin!(call)).await;
        assert_eq!(outcome, Err(BackstopElapsed));
        let waited = started.elapsed();
        assert!(waited >= backstop, "{waited:?}");
        assert!(waited < Duration::from_secs(30), "{waited:?}");
    }
}
