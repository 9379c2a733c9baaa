//! Failed logins counted per client address, in this process's memory: past the limit within the
//! window an address is refused (429) without its token being checked, until its oldest failure
//! leaves the window. Each replica counts on its own.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed logins an address may make within [`WINDOW`].
pub const MAX_FAILURES: usize = 10;
/// How long a failed login counts against its address.
pub const WINDOW: Duration = Duration::from_secs(300);
/// Past this many addresses, those without a failure in the window are forgotten.
const TIDY_ABOVE: usize = 4096;

/// Failed logins per address (IPv6 per /64: one host commonly holds the whole network).
#[derive(Default)]
pub struct LoginThrottle {
    failures: Mutex<HashMap<IpAddr, VecDeque<Instant>>>,
}

fn bucket(addr: IpAddr) -> IpAddr {
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
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let Some(times) = failures.get_mut(&bucket(addr)) else { return Ok(()) };
        while times.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
            times.pop_front();
        }
        match times.front() {
            Some(oldest) if times.len() >= MAX_FAILURES => Err(WINDOW - now.duration_since(*oldest)),
            _ => Ok(()),
        }
    }

    /// Records a failed login from `addr`.
    pub fn failed(&self, addr: IpAddr, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() > TIDY_ABOVE {
            failures.retain(|_, times| times.back().is_some_and(|t| now.duration_since(*t) < WINDOW));
        }
        let times = failures.entry(bucket(addr)).or_default();
        times.push_back(now);
        if times.len() > MAX_FAILURES {
            times.pop_front();
        }
    }

    /// Forgets `addr`'s failures once it logs in.
    pub fn succeeded(&self, addr: IpAddr) {
        self.failures.lock().unwrap_or_else(|e| e.into_inner()).remove(&bucket(addr));
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
}
