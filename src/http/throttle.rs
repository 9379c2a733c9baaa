//! What one client may do, counted in this process's memory (each replica counts on its own):
//! failed logins per address, past whose limit within the window an address is refused (429)
//! without its token being checked until its oldest failure leaves the window; bisections recorded
//! per token, past whose limit a token is refused (429) until its oldest one leaves the window
//! (both `WindowCount`); requests without a token in progress at once (`ClientShare`); and tokens
//! the store did not know (`UnknownTokens`).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Failed logins an address may make within [`WINDOW`].
pub const MAX_FAILURES: usize = 10;
/// How long a failed login counts against its address.
pub const WINDOW: Duration = Duration::from_secs(300);
/// Bisections one token may submit within [`BISECTION_WINDOW`]: far more than an agent bisecting
/// on a build host makes (each one builds and measures several toolchains), few enough that a
/// leaked token cannot flood the webhooks.
pub const BISECTIONS_PER_TOKEN: usize = 30;
/// How long a submitted bisection counts against its token.
pub const BISECTION_WINDOW: Duration = Duration::from_secs(600);
/// Past this many keys, those without an event in the window are forgotten.
const TIDY_ABOVE: usize = 4096;

/// Events per key within a sliding window, each key at most `max` of them: the one mechanism
/// behind failed logins per address and bisections per token.
pub struct WindowCount<K> {
    max: usize,
    window: Duration,
    events: Mutex<HashMap<K, VecDeque<Instant>>>,
}

impl<K: Hash + Eq> WindowCount<K> {
    pub fn new(max: usize, window: Duration) -> WindowCount<K> {
        WindowCount { max, window, events: Mutex::default() }
    }

    /// `Err(wait)` when `key` has had `max` events within the window and must wait that long.
    pub fn check(&self, key: &K, now: Instant) -> Result<(), Duration> {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        match events.get_mut(key) {
            Some(times) => self.wait(times, now),
            None => Ok(()),
        }
    }

    /// Counts an event of `key`.
    pub fn record(&self, key: K, now: Instant) {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        self.push(&mut events, key, now);
    }

    /// Counts an event of `key` unless it is at its limit: then `Err(wait)`, and nothing is
    /// counted. One lock for both, so that requests at once cannot all pass the check.
    pub fn take(&self, key: K, now: Instant) -> Result<(), Duration> {
        let mut events = self.events.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(times) = events.get_mut(&key) {
            self.wait(times, now)?;
        }
        self.push(&mut events, key, now);
        Ok(())
    }

    /// Forgets `key`'s events.
    pub fn forget(&self, key: &K) {
        self.events.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
    }

    fn wait(&self, times: &mut VecDeque<Instant>, now: Instant) -> Result<(), Duration> {
        while times.front().is_some_and(|t| now.duration_since(*t) >= self.window) {
            times.pop_front();
        }
        match times.front() {
            Some(oldest) if times.len() >= self.max => Err(self.window - now.duration_since(*oldest)),
            _ => Ok(()),
        }
    }

    fn push(&self, events: &mut HashMap<K, VecDeque<Instant>>, key: K, now: Instant) {
        if events.len() > TIDY_ABOVE {
            events.retain(|_, times| times.back().is_some_and(|t| now.duration_since(*t) < self.window));
        }
        let times = events.entry(key).or_default();
        times.push_back(now);
        if times.len() > self.max {
            times.pop_front();
        }
    }
}

/// How long a request without a token waits for its share of the database before it is refused.
pub const DATABASE_WAIT: Duration = Duration::from_secs(2);

/// The database connections requests without a token may hold at once: all of the pool but a
/// reserve of a quarter (at least two), which token checks, agents' writes and editors keep.
pub struct DatabaseShare {
    places: Arc<tokio::sync::Semaphore>,
    wait: Duration,
}

impl DatabaseShare {
    pub fn new(pool: u32, wait: Duration) -> DatabaseShare {
        let pool = pool as usize;
        let reserve = (pool / 4).max(2);
        let share = pool.saturating_sub(reserve).max(1);
        DatabaseShare { places: Arc::new(tokio::sync::Semaphore::new(share)), wait }
    }

    /// A place for one request's handler, waiting at most the share's wait; `None` when the
    /// share stayed taken.
    pub async fn enter(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        tokio::time::timeout(self.wait, self.places.clone().acquire_owned()).await.ok()?.ok()
    }

    /// How many requests may hold a place at once.
    #[cfg(test)]
    fn size(&self) -> usize {
        self.places.available_permits()
    }
}

/// How long a well-formed token the store did not know is refused from memory.
pub const UNKNOWN_FOR: Duration = Duration::from_secs(60);
/// Most unknown tokens remembered; past it, those older than [`UNKNOWN_FOR`] are forgotten, and
/// if all are younger, all.
const UNKNOWN_KEPT: usize = 8192;

/// Tokens the store did not know, by their hash, remembered for [`UNKNOWN_FOR`]: a client that
/// repeats one is refused without a database lookup or a request slot. A token is made with 256
/// random bits, so none is created that someone presented before.
#[derive(Default)]
pub struct UnknownTokens {
    seen: Mutex<HashMap<String, Instant>>,
}

impl UnknownTokens {
    /// Whether the token hashed `hash` was looked up and not found lately.
    pub fn holds(&self, hash: &str, now: Instant) -> bool {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.get(hash).is_some_and(|at| now.duration_since(*at) < UNKNOWN_FOR)
    }

    pub fn remember(&self, hash: String, now: Instant) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() >= UNKNOWN_KEPT {
            seen.retain(|_, at| now.duration_since(*at) < UNKNOWN_FOR);
            if seen.len() >= UNKNOWN_KEPT {
                seen.clear();
            }
        }
        seen.insert(hash, now);
    }
}

/// Failed logins per address (IPv6 per /64: one host commonly holds the whole network).
pub struct LoginThrottle {
    failures: WindowCount<IpAddr>,
}

impl Default for LoginThrottle {
    fn default() -> LoginThrottle {
        LoginThrottle { failures: WindowCount::new(MAX_FAILURES, WINDOW) }
    }
}

/// The address counted for `addr`: itself, or for IPv6 its /64.
pub(super) fn bucket(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V4(_) => addr,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

impl LoginThrottle {
    /// `Err(wait)` when `addr` has failed too often lately and must wait that long.
    pub fn check(&self, addr: IpAddr, now: Instant) -> Result<(), Duration> {
        self.failures.check(&bucket(addr), now)
    }

    /// Records a failed login from `addr`.
    pub fn failed(&self, addr: IpAddr, now: Instant) {
        self.failures.record(bucket(addr), now);
    }

    /// Forgets `addr`'s failures once it logs in.
    pub fn succeeded(&self, addr: IpAddr) {
        self.failures.forget(&bucket(addr));
    }
}

/// Requests in progress per client address, each at most `cap` at once (IPv6 per /64).
pub struct ClientShare {
    cap: usize,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One request's place in its address's share, given back when dropped.
pub struct ClientPlace {
    addr: IpAddr,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl ClientShare {
    pub fn new(cap: usize) -> ClientShare {
        ClientShare { cap, held: Arc::default() }
    }

    /// A place for one more request from `addr`; `None` when it has `cap` in progress.
    pub fn take(&self, addr: IpAddr) -> Option<ClientPlace> {
        let addr = bucket(addr);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let n = held.entry(addr).or_default();
        if *n >= self.cap {
            return None;
        }
        *n += 1;
        Some(ClientPlace { addr, held: self.held.clone() })
    }
}

impl Drop for ClientPlace {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        // An address with nothing in progress is forgotten, so the map holds only current clients.
        if let Some(n) = held.get_mut(&self.addr) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_waits_until_its_oldest_failure_leaves_the_window() {
        let throttle = LoginThrottle::default();
        let start = Instant::now();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        for i in 0..MAX_FAILURES as u64 {
            assert!(throttle.check(a, start + Duration::from_secs(i)).is_ok());
            throttle.failed(a, start + Duration::from_secs(i));
        }
        assert_eq!(throttle.check(a, start + Duration::from_secs(100)), Err(Duration::from_secs(200)));
        assert!(throttle.check("192.0.2.2".parse().unwrap(), start).is_ok());
        assert!(throttle.check(a, start + WINDOW).is_ok(), "the first failure has left the window");
        throttle.succeeded(a);
        assert!(throttle.check(a, start + Duration::from_secs(100)).is_ok());
    }

    #[test]
    fn ipv6_addresses_of_one_network_share_a_count() {
        let throttle = LoginThrottle::default();
        let now = Instant::now();
        for i in 0..MAX_FAILURES {
            throttle.failed(format!("2001:db8::{i:x}").parse().unwrap(), now);
        }
        assert!(throttle.check("2001:db8::ffff:1".parse().unwrap(), now).is_err());
        assert!(throttle.check("2001:db8:0:1::1".parse().unwrap(), now).is_ok());
    }

    #[test]
    fn a_token_takes_its_quota_then_waits_for_its_oldest_to_leave_the_window() {
        let quota = WindowCount::new(3, Duration::from_secs(60));
        let start = Instant::now();
        for i in 0..3 {
            assert!(quota.take(1_i64, start + Duration::from_secs(i)).is_ok());
        }
        let refused = start + Duration::from_secs(10);
        assert_eq!(quota.take(1, refused), Err(Duration::from_secs(50)));
        assert_eq!(quota.take(1, refused), Err(Duration::from_secs(50)), "a refusal is not counted");
        assert!(quota.take(2, refused).is_ok(), "another token has its own quota");
        assert!(quota.take(1, start + Duration::from_secs(60)).is_ok(), "the first has left the window");
        assert!(quota.take(1, start + Duration::from_secs(60)).is_err());
    }

    #[test]
    fn an_address_holds_at_most_its_share_and_gets_it_back_as_requests_end() {
        let share = ClientShare::new(2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let (first, second) = (share.take(a).unwrap(), share.take(a).unwrap());
        assert!(share.take(a).is_none(), "a third from one address");
        assert!(share.take("192.0.2.2".parse().unwrap()).is_some(), "another address has its own share");
        let _v6 =
            [share.take("2001:db8::1".parse().unwrap()).unwrap(), share.take("2001:db8::2".parse().unwrap()).unwrap()];
        assert!(share.take("2001:db8::3".parse().unwrap()).is_none(), "one /64 is one client");
        drop(first);
        assert!(share.take(a).is_some(), "a finished request gives its place back");
        drop(second);
        assert!(share.held.lock().unwrap().len() == 1, "only the /64 still holds places");
    }

    #[tokio::test(start_paused = true)]
    async fn the_database_share_keeps_a_reserve_and_refuses_once_its_wait_is_over() {
        let wait = Duration::from_secs(2);
        let sizes: Vec<usize> = [16, 8, 3, 1].map(|pool| DatabaseShare::new(pool, wait).size()).to_vec();
        assert_eq!(sizes, [12, 6, 1, 1], "a quarter, at least two, kept for requests with a token");
        let share = Arc::new(DatabaseShare::new(3, wait));
        let held = share.enter().await.unwrap();
        let started = tokio::time::Instant::now();
        assert!(share.enter().await.is_none(), "the share is taken");
        assert!(started.elapsed() >= wait, "refused only once the wait is over");
        let waiting = tokio::spawn({
            let share = share.clone();
            async move { share.enter().await.is_some() }
        });
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(held);
        assert!(waiting.await.unwrap(), "a place freed within the wait is taken");
    }
}
