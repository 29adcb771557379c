//! A live session's clock: the machine's, a recorded day's run as fast as its inputs allow, or
//! a recorded day's paced at a speed.
//!
//! It owns what "now" is for a session and how long to wait for a tick. It is the one place
//! the day crate reads the machine's clock, and it must not decide anything with it.

use time::OffsetDateTime;

/// Which clock a session lives by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Clock {
    /// The machine's: ticks happen as the day does.
    Wall,
    /// A recorded day's, moved only by its inputs: a tick runs once an input stamped after it
    /// arrived, or the inputs ended (what `aura run` does with the same signals).
    Replay,
    /// A recorded day's, running `speed` times as fast as the machine's from its start.
    Paced {
        /// How many seconds of the day go by in one second of the machine's.
        speed: f64,
    },
}

impl Clock {
    /// `wall`, `replay` or `replay:<speed>`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "wall" => Some(Self::Wall),
            "replay" => Some(Self::Replay),
            _ => {
                let speed: f64 = text.strip_prefix("replay:")?.parse().ok()?;
                (speed.is_finite() && speed > 0.0).then_some(Self::Paced { speed })
            }
        }
    }

    /// Whether it runs a recorded day (a scenario's start and end).
    pub fn replays(self) -> bool {
        !matches!(self, Self::Wall)
    }
}

/// A clock as a session reads it.
#[derive(Debug)]
pub(crate) struct Reading {
    clock: Clock,
    /// For a paced clock: the day's time and the machine's instant it was read at first.
    origin: (OffsetDateTime, std::time::Instant),
}

impl Reading {
    /// The clock, its day's time starting at `from` (a paced clock's, where the session goes
    /// on from).
    pub(crate) fn new(clock: Clock, from: OffsetDateTime) -> Self {
        Self {
            clock,
            origin: (from, std::time::Instant::now()),
        }
    }

    /// Now on the machine's clock, to the millisecond (what an arrival is stamped with).
    pub(crate) fn wall_now() -> OffsetDateTime {
        let now = OffsetDateTime::now_utc();
        now.replace_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000)
            .unwrap_or(now)
    }

    /// Now, or `None` for a replayed clock (its inputs say when it is).
    pub(crate) fn now(&self) -> Option<OffsetDateTime> {
        match self.clock {
            Clock::Wall => Some(Self::wall_now()),
            Clock::Replay => None,
            Clock::Paced { speed } => {
                let (day, instant) = self.origin;
                let elapsed = instant.elapsed().as_secs_f64() * speed;
                let nanos = (elapsed * 1e9).min(i64::MAX as f64) as i64;
                let now = day + time::Duration::nanoseconds(nanos);
                Some(
                    now.replace_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000)
                        .unwrap_or(now),
                )
            }
        }
    }

    /// How long to wait on the machine's clock until `at`; `None` for a replayed clock.
    pub(crate) fn until(&self, at: OffsetDateTime) -> Option<std::time::Duration> {
        let now = self.now()?;
        let day_seconds = (at - now).as_seconds_f64().max(0.0);
        let machine_seconds = match self.clock {
            Clock::Paced { speed } => day_seconds / speed,
            _ => day_seconds,
        };
        // A day ahead at most: the loop wakes and looks again.
        Some(std::time::Duration::from_secs_f64(
            machine_seconds.min(aura_contract::limits::LIVE_WAKE_AFTER_SECONDS_MAX),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_are_named_wall_replay_or_replay_at_a_speed() {
        assert_eq!(Clock::parse("wall"), Some(Clock::Wall));
        assert_eq!(Clock::parse("replay"), Some(Clock::Replay));
        assert_eq!(
            Clock::parse("replay:60"),
            Some(Clock::Paced { speed: 60.0 })
        );
        assert_eq!(
            Clock::parse("replay:0.5"),
            Some(Clock::Paced { speed: 0.5 })
        );
        for bad in [
            "replay:0",
            "replay:-2",
            "replay:inf",
            "replay:NaN",
            "replay:",
            "fast",
        ] {
            assert_eq!(Clock::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_paced_clock_waits_a_speedth_of_the_day() {
        let start = time::macros::datetime!(2026-11-23 06:30 UTC);
        let reading = Reading::new(Clock::Paced { speed: 60.0 }, start);
        // 15 minutes of the day are 15 seconds at 60x (less the few µs already gone).
        let wait = reading.until(start + time::Duration::minutes(15)).unwrap();
        assert!(wait <= std::time::Duration::from_secs(15));
        assert!(wait > std::time::Duration::from_millis(14_900));
        assert_eq!(Reading::new(Clock::Replay, start).until(start), None);
    }
}
